// The command line's answer to a 429: wait Retry-After once, say so, try again; against a real
// HTTP server on loopback that answers as the API's rate limit does.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rateLimitedFetch } from '../../src/cli/rate-limited-fetch';

let server: http.Server;
let url: string;
/** The statuses the server answers, one per request, then 200. */
const answers: number[] = [];
const bodies: string[] = [];

beforeAll(async () => {
  server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      bodies.push(body);
      const status = answers.shift() ?? 200;
      response.writeHead(status, status === 429 ? { 'retry-after': '1' } : {}).end(String(status));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('rateLimitedFetch', () => {
  it('waits Retry-After once after a 429, says so, and sends the same request again', async () => {
    const said: string[] = [];
    answers.push(429);
    bodies.length = 0;
    const response = await rateLimitedFetch((line) => said.push(line))(url, { method: 'POST', body: '{"event":"item.checked"}' });
    expect(response.status).toBe(200);
    expect(said).toEqual(['Rate limited: waiting 1 s (Retry-After) and trying once more.']);
    expect(bodies).toEqual(['{"event":"item.checked"}', '{"event":"item.checked"}']);
  });

  it('gives the second 429 as the answer', async () => {
    answers.push(429, 429);
    const response = await rateLimitedFetch(() => {})(url);
    expect(response.status).toBe(429);
    expect(answers).toEqual([]);
  });
});
