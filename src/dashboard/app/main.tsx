import { render } from 'preact';
import { App } from './app';
import './styles.css';

const root = document.getElementById('app')!;
// The page's "Loading…" placeholder gives way to the app.
root.replaceChildren();
render(<App />, root);
