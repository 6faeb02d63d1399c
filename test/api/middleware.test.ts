import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { errorEnvelope, requestLog, type ApiState } from '../../src/api/middleware';
import { createLogger } from '../../src/logger';
import { BackingServiceError } from '../../src/errors';

/** The answer of an app whose only handler throws `error`. */
async function answerTo(error: Error): Promise<{ status: number; headers: Headers; text: string }> {
  const app = new Koa<ApiState>();
  app.silent = true;
  const logger = createLogger('silent');
  app.use(requestLog(logger));
  app.use(errorEnvelope(logger));
  app.use(() => {
    throw error;
  });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/anything`);
    return { status: response.status, headers: response.headers, text: await response.text() };
  } finally {
    server.close();
  }
}

describe('errorEnvelope', () => {
  it('turns an unexpected error into a bare 500 INTERNAL envelope that leaks nothing', async () => {
    const answer = await answerTo(new Error('query failed at /work/main/src/db/secret-path.ts with password hunter2'));
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.text)).toEqual({ error: { code: 'INTERNAL', message: 'Something went wrong on our side.' } });
    expect(answer.text).not.toMatch(/hunter2|\/work\/|secret-path/);
  });

  it('answers 503 UNAVAILABLE with Retry-After when a workflow the request waited on failed on our side', async () => {
    const answer = await answerTo(new BackingServiceError('Workflow execution failed', { cause: new Error('activity timed out') }));
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('5');
    expect(JSON.parse(answer.text)).toEqual({ error: { code: 'UNAVAILABLE', message: expect.any(String) } });
  });
});
