#!/usr/bin/env node
// `svc-webhooks`: the public API from a terminal (docs/receiving.md, "The command line").
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { createApiClient } from '../client';
import { COMMANDS } from './commands';
import { ApiFailure, UsageError, must, type CommandContext } from './context';
import { rateLimitedFetch } from './rate-limited-fetch';
import { resolveSettings, saveSettings } from './settings';

const OPTIONS = {
  'api-url': { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  webhook: { type: 'string' },
  events: { type: 'string' },
  lists: { type: 'string' },
  list: { type: 'string' },
  status: { type: 'string' },
  secret: { type: 'string' },
  kind: { type: 'string' },
  outcome: { type: 'string' },
  event: { type: 'string' },
  limit: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  'expires-at': { type: 'string' },
  scopes: { type: 'string' },
  'forward-to': { type: 'string' },
  header: { type: 'string', multiple: true },
  'oauth2-token-url': { type: 'string' },
  'oauth2-client-id': { type: 'string' },
  'oauth2-client-secret': { type: 'string' },
  'oauth2-scope': { type: 'string' },
  'oauth2-audience': { type: 'string' },
  'client-cert': { type: 'string' },
  'client-key': { type: 'string' },
  'no-auth': { type: 'boolean' },
  'no-client-cert': { type: 'boolean' },
  after: { type: 'string' },
  follow: { type: 'boolean' },
} as const;

const USAGE = [
  'Usage: svc-webhooks <command> [options]',
  '',
  '  login [--api-url URL] [--token TOKEN]',
  ...Object.values(COMMANDS).map((command) => `  ${command.usage}`),
  '',
  'webhooks create and update set the receiver\'s credentials with [--header "Name: value"]... or',
  '--oauth2-token-url URL --oauth2-client-id ID --oauth2-client-secret SECRET [--oauth2-scope S]',
  '[--oauth2-audience A], and --client-cert FILE --client-key FILE (PEM); --no-auth and',
  '--no-client-cert remove them.',
  '',
  'Every command takes --api-url, --token (else SVC_WEBHOOKS_API_URL, SVC_WEBHOOKS_TOKEN, else what',
  'login saved) and --json (the API objects, as it answered them).',
].join('\n');

const say = (line: string) => process.stderr.write(`${line}\n`);
const out = (line: string) => process.stdout.write(`${line}\n`);

/** `login`: checks the token against the API and saves both, readable by their owner alone. */
async function login(flags: { 'api-url'?: string; token?: string }): Promise<void> {
  const apiUrl = resolveSettings(flags).apiUrl;
  let token = flags.token;
  if (token === undefined) {
    const prompt = createInterface({ input: process.stdin, output: process.stderr });
    token = (await prompt.question(`API token for ${apiUrl}: `)).trim();
    prompt.close();
  }
  const client = createApiClient({ apiUrl, token, fetch: rateLimitedFetch(say) });
  // The token's own row, which any token may read whatever its scopes.
  const own = must(await client.GET('/v3/account/token'));
  const file = saveSettings({ apiUrl, token });
  out(`Logged in to ${apiUrl} with the token ${own.name} (${own.scopes.join(', ')}); saved in ${file}.`);
}

async function main(argv: string[]): Promise<number> {
  const { values: flags, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  const [first, second, ...rest] = positionals;
  if (flags.help || first === undefined) {
    out(USAGE);
    return flags.help ? 0 : 2;
  }
  if (first === 'login') {
    await login(flags);
    return 0;
  }
  const twoWords = `${first} ${second}`;
  const [name, args] = twoWords in COMMANDS ? [twoWords, rest] : [first, positionals.slice(1)];
  const command = COMMANDS[name];
  if (command === undefined) {
    say(`Unknown command: ${positionals.join(' ')}\n\n${USAGE}`);
    return 2;
  }
  const { apiUrl, token } = resolveSettings(flags);
  const stopped = new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
  const context: CommandContext = {
    client: createApiClient({ apiUrl, token, fetch: rateLimitedFetch(say) }),
    apiUrl,
    args,
    flags,
    json: flags.json === true,
    out,
    stopped,
  };
  try {
    await command.run(context);
  } catch (error) {
    if (error instanceof UsageError) {
      say(`${error.message}\nUsage: svc-webhooks ${command.usage}`);
      return 2;
    }
    throw error;
  }
  return 0;
}

main(process.argv.slice(2))
  .then((code) => (process.exitCode = code))
  .catch((error: unknown) => {
    if (error instanceof ApiFailure) say(`Error ${error.code} (HTTP ${error.status}): ${error.message}`);
    else if (error instanceof TypeError && error.message === 'fetch failed') say(`The API could not be reached: ${String(error.cause)}`);
    else say(`Error: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  });
