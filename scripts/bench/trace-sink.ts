// Child process: an OTLP/HTTP trace sink on loopback for BENCH_TRACING=on. It answers every
// export at once and keeps nothing but counts, so that what the bench measures is the
// service's own cost of tracing, its exports included, and no backend's. A process of its
// own, so that its CPU is sampled apart from the harness's and the service's.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { serveRpc, type Served } from './lib/ipc';

/** An OTLP/JSON ExportTraceServiceRequest, as far as counting its spans needs. */
interface ExportRequest {
  resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[];
}

const counts = {
  /** POST /v1/traces received. */
  requests: 0,
  /** Their bodies, as sent. */
  bytes: 0,
  /** Spans in the JSON bodies. */
  spans: 0,
  /** Bodies whose spans were not counted: protobuf, compressed or unreadable (the service sends plain JSON). */
  uncounted: 0,
};
/** The spans of an OTLP/JSON body; null when it does not parse. */
function spansIn(body: Buffer): number | null {
  let request: ExportRequest;
  try {
    request = JSON.parse(body.toString('utf8')) as ExportRequest;
  } catch {
    return null;
  }
  return (request.resourceSpans ?? []).reduce(
    (sum, resource) => sum + (resource.scopeSpans ?? []).reduce((n, scope) => n + (scope.spans?.length ?? 0), 0),
    0,
  );
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'POST' || req.url !== '/v1/traces') {
    res.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    counts.requests++;
    counts.bytes += body.length;
    const json = String(req.headers['content-type']).startsWith('application/json') && !req.headers['content-encoding'];
    const spans = json ? spansIn(body) : null;
    if (spans === null) counts.uncounted++;
    else counts.spans += spans;
    // An empty ExportTraceServiceResponse: every span accepted.
    res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
  });
}

const handlers = {
  async start() {
    const server = http.createServer({ keepAliveTimeout: 30_000 }, handle);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { port: (server.address() as AddressInfo).port };
  },
  counts() {
    return { ...counts };
  },
};
serveRpc(handlers);

export type TraceSinkApi = Served<typeof handlers>;
export type TraceSinkCounts = typeof counts;
