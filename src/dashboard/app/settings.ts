// What the page learns of the service's configuration (GET /dashboard/settings.json, no token),
// read once before it renders, and given to the views that use it through a context.
import { createContext } from 'preact';
import type { DashboardSettings } from '../settings';

const DEFAULTS: DashboardSettings = { traceUrlTemplate: null };

export const SettingsContext = createContext<DashboardSettings>(DEFAULTS);

/** The service's settings; the defaults when they cannot be read, with which every page still works. */
export async function loadSettings(): Promise<DashboardSettings> {
  try {
    const response = await fetch('/dashboard/settings.json', { credentials: 'omit', cache: 'no-store' });
    if (response.ok) return (await response.json()) as DashboardSettings;
  } catch {
    // The service is unreachable: signing in, whose call fails too, says so.
  }
  return DEFAULTS;
}
