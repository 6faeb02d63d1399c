import { render } from 'preact';
import { App } from './app';
import { loadSettings, SettingsContext } from './settings';
import './styles.css';

const root = document.getElementById('app')!;
// Read before the first render, so that no trace id is shown as text and then as a link.
const settings = await loadSettings();
// The page's "Loading…" placeholder gives way to the app.
root.replaceChildren();
render(
  <SettingsContext.Provider value={settings}>
    <App />
  </SettingsContext.Provider>,
  root,
);
