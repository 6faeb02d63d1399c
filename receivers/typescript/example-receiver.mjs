// An example webhook receiver (docs/receiving.md) written with the package's receiver library,
// as receivers/python/example_receiver.py and receivers/go/cmd/example-receiver are with theirs:
//
//   WEBHOOK_SECRETS=whsec_new,whsec_old SEEN_STATE_FILE=seen.jsonl TLS_CERT=cert.pem TLS_KEY=key.pem \
//     PORT=8443 node receivers/typescript/example-receiver.mjs
//
// WEBHOOK_SECRETS holds one secret, or several (comma-separated) while one replaces another;
// WEBHOOK_ID, if set, is the only SVC-Webhook accepted. With SVC_API_URL and SVC_API_TOKEN (a
// token with deliveries:read) and WEBHOOK_ID, it catches up from the webhook's feed once it
// listens, then serves pushes, and pulls what a cursor gap says it missed. Without TLS_CERT and
// TLS_KEY it serves plain HTTP, for behind an HTTPS terminator. It prints {"listening": port},
// then one JSON line per event handed to its handler (with "via": "push" or "pull") and per
// other verdict or refused request, and {"caughtUp": n} when the catch-up at start is done: the
// verdict with the delivery's trace id (null when it came without a valid traceparent), or the
// error that refused it. It prints each event inside a span that continues the delivery's trace,
// which a process with OpenTelemetry set up records.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { pathToFileURL } from 'node:url';
import { DeliveryError, MemorySeenStore, WebhookReceiver, withDeliverySpan } from 'svc-webhooks/receiver';

const MAX_BODY_BYTES = 64 * 1024;

/**
 * A SeenStore kept in a file, so that gaps and duplicates are told across restarts: the library's
 * MemorySeenStore, with every change appended to the file as a JSON line and replayed at start.
 * An example for one process: a production receiver keeps this in its database.
 */
export class FileSeenStore {
  constructor(path) {
    this.path = path;
    this.memory = new MemorySeenStore();
    const lines = existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
    for (const change of lines.map((line) => JSON.parse(line))) {
      if (change.markSeen) this.memory.markSeen(change.markSeen);
      if (change.forget) this.memory.forget(change.forget);
      if (change.advanceCursor) this.memory.advanceCursor(...change.advanceCursor);
      if (change.savePosition) this.memory.savePosition(...change.savePosition);
    }
  }

  markSeen(key) {
    const isNew = this.memory.markSeen(key);
    if (isNew) appendFileSync(this.path, JSON.stringify({ markSeen: key }) + '\n');
    return isNew;
  }

  forget(key) {
    this.memory.forget(key);
    appendFileSync(this.path, JSON.stringify({ forget: key }) + '\n');
  }

  advanceCursor(webhookId, listId, cursor) {
    const previous = this.memory.advanceCursor(webhookId, listId, cursor);
    if (previous === null || cursor > previous)
      appendFileSync(this.path, JSON.stringify({ advanceCursor: [webhookId, listId, cursor] }) + '\n');
    return previous;
  }

  position(webhookId) {
    return this.memory.position(webhookId);
  }

  savePosition(webhookId, position) {
    this.memory.savePosition(webhookId, position);
    appendFileSync(this.path, JSON.stringify({ savePosition: [webhookId, position] }) + '\n');
  }
}

/** One JSON line's worth: the verdict with its delivery's fields and trace id. */
export function describe(verdict) {
  const traceId = verdict.trace?.traceId ?? null;
  if (verdict.outcome === 'ping') return { outcome: 'ping', traceId };
  return { outcome: verdict.outcome, traceId, ...verdict.delivery, gap: verdict.gap ?? null };
}

const print = (line) => console.log(JSON.stringify(line));

/**
 * The handler the receiver hands each event to, pushed or pulled: it tells `onVerdict`, inside a
 * span that continues the delivery's trace, as a receiver's own handling would run.
 */
export function printingHandler(onVerdict = print) {
  return (verdict, via) => withDeliverySpan(verdict, () => onVerdict({ ...describe(verdict), via }));
}

/**
 * An HTTP server (HTTPS with `tls`) that judges every request with `receiver` before it answers:
 * the receiver's handler has the events; `onVerdict` is told of the rest (pings, duplicates,
 * test events, refusals).
 */
export function createReceiverServer({ receiver, tls, onVerdict = print }) {
  const handle = (req, res) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) req.destroy();
      else chunks.push(chunk);
    });
    req.on('end', () => {
      // Verify the raw bytes as received: the library parses them only once they are verified.
      receiver.receive(req.headers, Buffer.concat(chunks)).then(
        async (verdict) => {
          if (verdict.outcome !== 'new' && verdict.outcome !== 'late') await withDeliverySpan(verdict, () => onVerdict(describe(verdict)));
          // Answer quickly (the service waits at most DELIVERY_TIMEOUT_MS); do slow work afterwards.
          // A duplicate is answered 2xx too: it was handled when it first came.
          res.writeHead(204).end();
        },
        (error) => {
          if (!(error instanceof DeliveryError)) return res.writeHead(500).end();
          onVerdict({ error: error.code, message: error.message });
          res.writeHead(error.code === 'invalid_signature' ? 401 : 400).end();
        },
      );
    });
  };
  return tls ? https.createServer(tls, handle) : http.createServer(handle);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const env = process.env;
  const receiver = new WebhookReceiver({
    secrets: (env.WEBHOOK_SECRETS ?? '').split(',').filter(Boolean),
    webhookId: env.WEBHOOK_ID || undefined,
    store: env.SEEN_STATE_FILE ? new FileSeenStore(env.SEEN_STATE_FILE) : undefined,
    handler: printingHandler(),
    feed: env.SVC_API_URL ? { baseUrl: env.SVC_API_URL, token: env.SVC_API_TOKEN ?? '' } : undefined,
  });
  const tls = env.TLS_CERT && env.TLS_KEY ? { cert: readFileSync(env.TLS_CERT), key: readFileSync(env.TLS_KEY) } : undefined;
  const server = createReceiverServer({ receiver, tls });
  server.listen(Number(env.PORT ?? 8443), async () => {
    print({ listening: server.address().port });
    // Pushes are served meanwhile: the store tells each event once, whichever way it comes first.
    if (env.SVC_API_URL) print({ caughtUp: await receiver.catchUp() });
  });
}
