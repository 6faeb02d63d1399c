// Where the command line finds the API and its token: --api-url / --token, else
// SVC_WEBHOOKS_API_URL / SVC_WEBHOOKS_TOKEN, else the file `login` wrote, else
// http://localhost:3000 and no token.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const DEFAULT_API_URL = 'http://localhost:3000';

export interface Settings {
  apiUrl: string;
  token?: string;
}

/** ~/.config/svc-webhooks/config.json, or under $XDG_CONFIG_HOME when it is set. */
export function settingsFile(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(base, 'svc-webhooks', 'config.json');
}

function readSaved(file: string): Partial<Settings> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Partial<Settings>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new Error(`${file} could not be read: ${(error as Error).message}`, { cause: error });
  }
}

export function resolveSettings(flags: { 'api-url'?: string; token?: string }, env: NodeJS.ProcessEnv = process.env): Settings {
  const saved = readSaved(settingsFile(env));
  return {
    apiUrl: flags['api-url'] ?? env.SVC_WEBHOOKS_API_URL ?? saved.apiUrl ?? DEFAULT_API_URL,
    token: flags.token ?? env.SVC_WEBHOOKS_TOKEN ?? saved.token,
  };
}

/** Writes the settings readable by their owner alone (0600): the file holds a token. */
export function saveSettings(settings: Settings, env: NodeJS.ProcessEnv = process.env): string {
  const file = settingsFile(env);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
  return file;
}
