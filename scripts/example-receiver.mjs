// An example webhook receiver (docs/api.md, "Receiving webhooks"). Run it behind your HTTPS
// terminator: WEBHOOK_SECRET=whsec_... PORT=8080 node scripts/example-receiver.mjs
import http from 'node:http';
import { pathToFileURL } from 'node:url';
import { verifySignature } from 'svc-webhooks/verify';

const MAX_BODY_BYTES = 64 * 1024;

export function createReceiver(secret, onEvent = (event) => console.log('received', event)) {
  return http.createServer((req, res) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) req.destroy();
      else chunks.push(chunk);
    });
    req.on('end', () => {
      // The registration ping comes before you hold the secret: answer it without checking.
      if (req.headers['svc-event'] === 'ping') return res.writeHead(204).end();
      // Verify the raw bytes as received, before parsing them.
      const raw = Buffer.concat(chunks);
      if (!verifySignature(raw, req.headers['svc-signature'], secret)) return res.writeHead(401).end();
      onEvent(JSON.parse(raw.toString('utf8')), req.headers['svc-delivery']);
      // Answer quickly (the service waits at most DELIVERY_TIMEOUT_MS); do slow work afterwards.
      res.writeHead(204).end();
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  createReceiver(process.env.WEBHOOK_SECRET).listen(Number(process.env.PORT ?? 8080));
}
