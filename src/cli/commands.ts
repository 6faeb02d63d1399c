// The command line's commands, each a call or two of the typed client (src/client). With
// --json each prints what the API answered; otherwise a table or lines a person reads.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiSchemas, operations } from '../client';
import { UsageError, arg, flag, list, must, repeatedFlag, requiredFlag, type CommandContext } from './context';
import { listen } from './listen';
import { describeResult, fields, table, type Columns } from './output';

function print(ctx: CommandContext, object: unknown, human: () => string): void {
  ctx.out(ctx.json ? JSON.stringify(object, null, 2) : human());
}

type Webhook = ApiSchemas['Webhook'];
type Topic = Webhook['events'][number];
type Scope = ApiSchemas['ApiToken']['scopes'][number];
type LogEntry = ApiSchemas['DeliveryPage']['data'][number];
type LogQuery = NonNullable<operations['listDeliveries']['parameters']['query']>;
type Credentials = Pick<ApiSchemas['UpdateWebhookBody'], 'auth' | 'clientCertificate'>;
type FeedItem = ApiSchemas['FeedPage']['data'][number];

const WEBHOOK_COLUMNS: Columns<Webhook> = [
  ['ID', 'id'],
  ['URL', 'url'],
  ['STATUS', (webhook) => (webhook.relay ? 'relay' : webhook.status)],
  ['FAILURES', 'consecutiveFailures'],
  ['TOPICS', 'events'],
  ['LISTS', (webhook) => (webhook.listIds.length === 0 ? 'all' : webhook.listIds)],
];

const LOG_COLUMNS: Columns<LogEntry> = [
  ['ATTEMPTED', 'attemptedAt'],
  ['ID', 'id'],
  ['KIND', 'kind'],
  ['EVENT', 'event'],
  ['OUTCOME', 'outcome'],
  ['STATUS', 'statusCode'],
  ['ERROR', 'error'],
  ['MS', 'durationMs'],
];

const onWebhook = (id: string) => ({ params: { path: { id } } });
/** The logged delivery a command names: `<delivery-id> --webhook <webhook-id>`. */
const onDelivery = (ctx: CommandContext) => ({
  params: { path: { id: requiredFlag(ctx, 'webhook'), deliveryId: arg(ctx, 0, 'delivery id') } },
});

/** Changes the webhook the command names (`<webhook-id>`) and answers it as it now is. */
async function patchWebhook(ctx: CommandContext, body: ApiSchemas['UpdateWebhookBody']): Promise<Webhook> {
  return must(await ctx.client.PATCH('/v3/webhooks/{id}', { ...onWebhook(arg(ctx, 0, 'webhook id')), body }));
}

/** `--header "Name: value"`s as one object; never echoing a value, which may be the credential. */
function headersOf(given: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const header of given) {
    const colon = header.indexOf(':');
    if (colon < 1) throw new UsageError('--header takes "Name: value"');
    const name = header.slice(0, colon).trim();
    if (Object.hasOwn(headers, name)) throw new UsageError(`--header ${name} is given twice`);
    headers[name] = header.slice(colon + 1).trim();
  }
  return headers;
}

/**
 * The receiver's credentials the flags set: --header ..., or the --oauth2-* ones; --client-cert
 * with --client-key (files of PEM); --no-auth and --no-client-cert remove them. None: unchanged.
 */
function credentialsOf(ctx: CommandContext): Credentials {
  const credentials: Credentials = {};
  const headers = repeatedFlag(ctx, 'header');
  const oauth2 = ['token-url', 'client-id', 'client-secret', 'scope', 'audience'].some((name) => flag(ctx, `oauth2-${name}`) !== undefined);
  const removeAuth = ctx.flags['no-auth'] === true;
  if (Number(headers.length > 0) + Number(oauth2) + Number(removeAuth) > 1) {
    throw new UsageError('--header, --oauth2-* and --no-auth exclude each other');
  }
  if (headers.length > 0) credentials.auth = { type: 'headers', headers: headersOf(headers) };
  if (oauth2) {
    credentials.auth = {
      type: 'oauth2',
      tokenUrl: requiredFlag(ctx, 'oauth2-token-url'),
      clientId: requiredFlag(ctx, 'oauth2-client-id'),
      clientSecret: requiredFlag(ctx, 'oauth2-client-secret'),
      scope: flag(ctx, 'oauth2-scope'),
      audience: flag(ctx, 'oauth2-audience'),
    };
  }
  if (removeAuth) credentials.auth = null;

  const certificate = flag(ctx, 'client-cert');
  const key = flag(ctx, 'client-key');
  const removeCertificate = ctx.flags['no-client-cert'] === true;
  if ((certificate === undefined) !== (key === undefined)) throw new UsageError('--client-cert and --client-key go together');
  if (certificate !== undefined && removeCertificate) throw new UsageError('--client-cert and --no-client-cert exclude each other');
  if (certificate !== undefined) {
    credentials.clientCertificate = { certificate: readFileSync(certificate, 'utf8'), privateKey: readFileSync(key!, 'utf8') };
  }
  if (removeCertificate) credentials.clientCertificate = null;
  return credentials;
}

async function deliveriesPage(ctx: CommandContext, webhookId: string, query: LogQuery) {
  return must(await ctx.client.GET('/v3/webhooks/{id}/deliveries', { params: { path: { id: webhookId }, query } }));
}

function logQuery(ctx: CommandContext): LogQuery {
  // As given: the API validates them, and its error says what is wrong.
  return {
    kind: flag(ctx, 'kind') as LogQuery['kind'],
    outcome: flag(ctx, 'outcome') as LogQuery['outcome'],
    event: flag(ctx, 'event') as LogQuery['event'],
    limit: flag(ctx, 'limit'),
  };
}

/** Prints the log's new entries as they come, oldest first, until Ctrl-C. */
async function tailDeliveries(ctx: CommandContext): Promise<void> {
  const webhookId = requiredFlag(ctx, 'webhook');
  const query = logQuery(ctx);
  // The ids of the page read last: an entry of the next page that is not among them is new.
  let seen = new Set<string>();
  const show = (entries: LogEntry[], first: boolean) => {
    const fresh = entries.filter((entry) => !seen.has(entry.id)).reverse();
    seen = new Set(entries.map((entry) => entry.id));
    if (ctx.json) for (const entry of fresh) ctx.out(JSON.stringify(entry));
    else if (first) ctx.out(table(fresh, LOG_COLUMNS));
    // Later entries under the heading printed first (each batch's columns as wide as its own cells).
    else if (fresh.length > 0) ctx.out(table(fresh, LOG_COLUMNS).split('\n').slice(1).join('\n'));
  };
  show((await deliveriesPage(ctx, webhookId, { ...query, limit: query.limit ?? '10' })).data, true);
  const next = () => Promise.race([sleep(TAIL_POLL_MS).then(() => 'poll' as const), ctx.stopped.then(() => 'stop' as const)]);
  while ((await next()) === 'poll') show((await deliveriesPage(ctx, webhookId, { ...query, limit: '100' })).data, false);
}

/** How often `deliveries tail` reads the log. */
const TAIL_POLL_MS = 1000;

/** An event of the feed on one line: when its write was made, what it is, and how to name it. */
const eventLine = (item: FeedItem) => [item.at, item.event, item.listId, item.cursor, item.deliveryId, item.position].join('  ');

/**
 * Prints the webhook's feed from `--after` (from its oldest item kept without), a page at a
 * time, to its end; with --follow, then each new event as it is recorded (long polls of the
 * API's wait), until Ctrl-C.
 */
async function printEvents(ctx: CommandContext): Promise<void> {
  const webhookId = requiredFlag(ctx, 'webhook');
  const follow = ctx.flags.follow === true;
  // Ctrl-C ends the long poll under way, not only the next one.
  const abort = new AbortController();
  void ctx.stopped.then(() => abort.abort());
  let after = flag(ctx, 'after');
  for (;;) {
    const query = { after, limit: String(FEED_PAGE_LIMIT), wait: follow ? String(FEED_WAIT_SECONDS) : undefined };
    const page = await ctx.client
      .GET('/v3/webhooks/{id}/events', { params: { path: { id: webhookId }, query }, signal: abort.signal })
      .then(must, (error: unknown) => {
        if (abort.signal.aborted) return null;
        throw error;
      });
    if (page === null) return;
    for (const item of page.data) ctx.out(ctx.json ? JSON.stringify(item) : eventLine(item));
    after = page.next ?? after;
    if (abort.signal.aborted || (!follow && page.data.length < FEED_PAGE_LIMIT)) return;
  }
}

/** The most items a page of the feed holds; how long `events --follow` asks the API to hold an empty answer. */
const FEED_PAGE_LIMIT = 500;
const FEED_WAIT_SECONDS = 30;

/** Every command by its words: `webhooks list`, `trigger`. */
export const COMMANDS: Record<string, { usage: string; run: (ctx: CommandContext) => Promise<void> }> = {
  'webhooks list': {
    usage: 'webhooks list',
    async run(ctx) {
      const { data } = must(await ctx.client.GET('/v3/webhooks'));
      print(ctx, data, () => table(data, WEBHOOK_COLUMNS));
    },
  },
  'webhooks get': {
    usage: 'webhooks get <webhook-id>',
    async run(ctx) {
      const webhook = must(await ctx.client.GET('/v3/webhooks/{id}', onWebhook(arg(ctx, 0, 'webhook id'))));
      print(ctx, webhook, () => fields(webhook));
    },
  },
  'webhooks create': {
    usage: 'webhooks create <https-url> [--events t1,t2] [--lists l1,l2] [receiver credentials: see --help]',
    async run(ctx) {
      const body = {
        url: arg(ctx, 0, 'URL'),
        events: list(flag(ctx, 'events')) as Topic[] | undefined,
        listIds: list(flag(ctx, 'lists')),
        ...credentialsOf(ctx),
      };
      const webhook = must(await ctx.client.POST('/v3/webhooks', { body }));
      print(ctx, webhook, () => `${fields(webhook)}\nThe secret is shown this once: store it now.`);
    },
  },
  'webhooks update': {
    usage: 'webhooks update <webhook-id> [--events t1,t2] [--lists l1,l2] [--status active|paused] [receiver credentials: see --help]',
    async run(ctx) {
      const webhook = await patchWebhook(ctx, {
        events: list(flag(ctx, 'events')) as Topic[] | undefined,
        listIds: list(flag(ctx, 'lists')),
        status: flag(ctx, 'status') as Webhook['status'] | undefined,
        ...credentialsOf(ctx),
      });
      print(ctx, webhook, () => fields(webhook));
    },
  },
  'webhooks reactivate': {
    usage: 'webhooks reactivate <webhook-id>',
    async run(ctx) {
      const webhook = await patchWebhook(ctx, { status: 'active' });
      print(ctx, webhook, () => `Reactivated ${webhook.id}: failures reset to ${webhook.consecutiveFailures}.`);
    },
  },
  'webhooks delete': {
    usage: 'webhooks delete <webhook-id>',
    async run(ctx) {
      const id = arg(ctx, 0, 'webhook id');
      must(await ctx.client.DELETE('/v3/webhooks/{id}', onWebhook(id)));
      print(ctx, { deleted: id }, () => `Deleted ${id}.`);
    },
  },
  'webhooks ping': {
    usage: 'webhooks ping <webhook-id>',
    async run(ctx) {
      const result = must(await ctx.client.POST('/v3/webhooks/{id}/pings', onWebhook(arg(ctx, 0, 'webhook id'))));
      print(ctx, result, () => `Ping ${describeResult(result)}`);
    },
  },
  'webhooks rotate-secret': {
    usage: 'webhooks rotate-secret <webhook-id> [--secret whsec_...]',
    async run(ctx) {
      const secret = flag(ctx, 'secret');
      const id = arg(ctx, 0, 'webhook id');
      const rotated = must(
        await ctx.client.POST('/v3/webhooks/{id}/secret', { ...onWebhook(id), body: secret === undefined ? undefined : { secret } }),
      );
      print(ctx, rotated, () => `New secret of ${id}: ${rotated.secret}\nIt is shown this once: store it now.`);
    },
  },
  trigger: {
    usage: 'trigger <topic> --webhook <webhook-id> [--list <list-id>]',
    async run(ctx) {
      const webhookId = requiredFlag(ctx, 'webhook');
      const body = { event: arg(ctx, 0, 'topic') as Topic, listId: flag(ctx, 'list') };
      const sent = must(await ctx.client.POST('/v3/webhooks/{id}/test-events', { ...onWebhook(webhookId), body }));
      print(ctx, sent, () => `Test event ${sent.deliveryId} ${describeResult(sent)}`);
    },
  },
  listen: {
    usage: 'listen --forward-to <http(s)-url> [--events t1,t2] [--list l1,l2]',
    run: listen,
  },
  'deliveries list': {
    usage: 'deliveries list --webhook <webhook-id> [--kind k] [--outcome o] [--event e] [--limit n]',
    async run(ctx) {
      const page = await deliveriesPage(ctx, requiredFlag(ctx, 'webhook'), logQuery(ctx));
      print(ctx, page, () => table(page.data, LOG_COLUMNS));
    },
  },
  'deliveries get': {
    usage: 'deliveries get <delivery-id> --webhook <webhook-id>',
    async run(ctx) {
      const detail = must(await ctx.client.GET('/v3/webhooks/{id}/deliveries/{deliveryId}', onDelivery(ctx)));
      print(ctx, detail, () => fields(detail));
    },
  },
  'deliveries redeliver': {
    usage: 'deliveries redeliver <delivery-id> --webhook <webhook-id>',
    async run(ctx) {
      const result = must(await ctx.client.POST('/v3/webhooks/{id}/deliveries/{deliveryId}/redeliveries', onDelivery(ctx)));
      print(ctx, result, () => `Redelivery ${result.deliveryId} ${describeResult(result)}`);
    },
  },
  'deliveries tail': {
    usage: 'deliveries tail --webhook <webhook-id> [--kind k] [--outcome o] [--event e]',
    run: tailDeliveries,
  },
  events: {
    usage: 'events --webhook <webhook-id> [--after <position>] [--follow]',
    run: printEvents,
  },
  recover: {
    usage: 'recover --webhook <webhook-id> --since <ISO time> [--until <ISO time>]',
    async run(ctx) {
      const body = { since: requiredFlag(ctx, 'since'), until: flag(ctx, 'until') };
      const recovery = must(await ctx.client.POST('/v3/webhooks/{id}/recoveries', { ...onWebhook(requiredFlag(ctx, 'webhook')), body }));
      print(ctx, recovery, () => fields(recovery));
    },
  },
  'tokens list': {
    usage: 'tokens list',
    async run(ctx) {
      const { data } = must(await ctx.client.GET('/v3/account/tokens'));
      print(ctx, data, () =>
        table(data, [
          ['ID', 'id'],
          ['NAME', 'name'],
          ['PREFIX', 'prefix'],
          ['SCOPES', 'scopes'],
          ['EXPIRES', 'expiresAt'],
          ['LAST USED', 'lastUsedAt'],
        ]),
      );
    },
  },
  'tokens create': {
    usage: 'tokens create <name> [--expires-at <ISO time>] [--scopes webhooks:read,deliveries:read,...]',
    async run(ctx) {
      const body = {
        name: arg(ctx, 0, 'name'),
        expiresAt: flag(ctx, 'expires-at'),
        scopes: list(flag(ctx, 'scopes')) as Scope[] | undefined,
      };
      const created = must(await ctx.client.POST('/v3/account/tokens', { body }));
      print(ctx, created, () => `${fields(created)}\nThe token is shown this once: store it now.`);
    },
  },
  'tokens revoke': {
    usage: 'tokens revoke <token-id>',
    async run(ctx) {
      const tokenId = arg(ctx, 0, 'token id');
      must(await ctx.client.DELETE('/v3/account/tokens/{tokenId}', { params: { path: { tokenId } } }));
      print(ctx, { revoked: tokenId }, () => `Revoked ${tokenId}.`);
    },
  },
};
