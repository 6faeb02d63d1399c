import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { errorEnvelope, requestLog, type ApiState } from '../../src/api/middleware';
import { createLogger } from '../../src/logger';

describe('errorEnvelope', () => {
  it('turns an unexpected error into a bare 500 INTERNAL envelope that leaks nothing', async () => {
    const app = new Koa<ApiState>();
    app.silent = true;
    const logger = createLogger('silent');
    app.use(requestLog(logger));
    app.use(errorEnvelope(logger));
    app.use(() => {
      throw new Error('query failed at /work/main/src/db/secret-path.ts with password hunter2');
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/anything`);
      expect(response.status).toBe(500);
      const text = await response.text();
      expect(JSON.parse(text)).toEqual({ error: { code: 'INTERNAL', message: 'Something went wrong on our side.' } });
      expect(text).not.toMatch(/hunter2|\/work\/|secret-path/);
    } finally {
      server.close();
    }
  });
});
