// @ts-check
// Child process: the open-loop load generator. Request i is due at t0 = start + i / rate,
// whether or not earlier ones have been answered; every latency is taken from t0, so a
// generator (or a connection pool) that falls behind shows up in the figures.
'use strict';

const { Agent, request } = require('undici');
const { serveRpc } = require('./lib/ipc');
const { nowMs } = require('./lib/stats');

const agent = new Agent({ connections: 512, keepAliveTimeout: 30_000, headersTimeout: 0, bodyTimeout: 0 });

/**
 * Fires fire(i, t0) for i = 0..count-1 at t0 = startAt + i * 1000 / rate; resolves when every
 * returned promise has settled.
 * @param {number} count @param {number} rate @param {number} startAt epoch ms
 * @param {(i: number, t0: number) => Promise<void>} fire
 */
function openLoop(count, rate, startAt, fire) {
  const interval = 1000 / rate;
  /** @type {Promise<void>[]} */
  const inFlight = [];
  let i = 0;
  return /** @type {Promise<void>} */ (new Promise((resolve) => {
    const tick = () => {
      const now = nowMs();
      while (i < count && startAt + i * interval <= now) {
        inFlight.push(fire(i, startAt + i * interval));
        i++;
      }
      if (i < count) setTimeout(tick, Math.max(0, startAt + i * interval - nowMs() - 0.5));
      else void Promise.allSettled(inFlight).then(() => resolve());
    };
    setTimeout(tick, Math.max(0, startAt - nowMs()));
  }));
}

/**
 * @param {string} url @param {string} token @param {string} body @param {number} timeoutMs
 * @returns {Promise<{ status: number, json: any, error: string | null }>}
 */
async function postJson(url, token, body, timeoutMs) {
  try {
    const response = await request(url, {
      method: 'POST',
      dispatcher: agent,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.body.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the status only
    }
    return { status: response.statusCode, json, error: null };
  } catch (error) {
    return { status: 0, json: null, error: /** @type {any} */ (error)?.code ?? String(error) };
  }
}

/** A write of about 1 KiB: `changes` item.added changes with long item ids (topics list.changed and item.added). */
function writeBody(/** @type {string} */ writeId, /** @type {number} */ changes) {
  const list = [];
  for (let k = 0; k < changes; k++) list.push({ type: 'item.added', itemId: `item-${writeId}-${k}-${'x'.repeat(64)}` });
  return JSON.stringify({ writeId, changes: list });
}

serveRpc({
  /**
   * Writes at `rate` per second for `durationMs`, to lists[i % lists.length], from `startAt`.
   * Returns one record per write, column-wise.
   */
  async writes({ baseUrl, token, lists, rate, durationMs, startAt, writeIdPrefix, changes, timeoutMs }) {
    const count = Math.round((rate * durationMs) / 1000);
    const out = {
      writeId: /** @type {string[]} */ ([]),
      list: /** @type {string[]} */ ([]),
      t0: /** @type {number[]} */ ([]),
      sentLag: /** @type {number[]} */ ([]),
      doneAt: /** @type {number[]} */ ([]),
      status: /** @type {number[]} */ ([]),
      cursor: /** @type {(number | null)[]} */ ([]),
      error: /** @type {(string | null)[]} */ ([]),
      bodyBytes: 0,
      /** Most requests waiting for an answer at once. */
      maxInFlight: 0,
    };
    let inFlight = 0;
    /** @type {string[]} */
    const bodies = [];
    for (let i = 0; i < count; i++) bodies.push(writeBody(`${writeIdPrefix}-${i}`, changes));
    out.bodyBytes = bodies[0] ? Buffer.byteLength(bodies[0]) : 0;
    await openLoop(count, rate, startAt, async (i, t0) => {
      const listId = lists[i % lists.length];
      out.writeId[i] = `${writeIdPrefix}-${i}`;
      out.list[i] = listId;
      out.t0[i] = t0;
      out.sentLag[i] = nowMs() - t0;
      inFlight++;
      if (inFlight > out.maxInFlight) out.maxInFlight = inFlight;
      const answer = await postJson(`${baseUrl}/internal/v3/lists/${encodeURIComponent(listId)}/writes`, token, /** @type {string} */ (bodies[i]), timeoutMs);
      out.doneAt[i] = nowMs();
      inFlight--;
      out.status[i] = answer.status;
      out.cursor[i] = answer.status === 202 ? Number(answer.json?.cursor) : null;
      out.error[i] = answer.error ?? (answer.status === 202 ? null : answer.json?.error?.code ?? `HTTP ${answer.status}`);
    });
    return out;
  },

  /** Registers items[i] at `rate` per second from `startAt`; one record per registration. */
  async registrations({ baseUrl, items, rate, startAt, timeoutMs }) {
    /** @type {{ i: number, t0: number, doneAt: number, status: number, webhookId: string | null, secret: string | null, error: string | null }[]} */
    const out = [];
    await openLoop(items.length, rate, startAt, async (i, t0) => {
      const { token, url, events } = items[i];
      const answer = await postJson(`${baseUrl}/v3/webhooks`, token, JSON.stringify(events ? { url, events } : { url }), timeoutMs);
      out[i] = {
        i,
        t0,
        doneAt: nowMs(),
        status: answer.status,
        webhookId: answer.json?.id ?? null,
        secret: answer.json?.secret ?? null,
        error: answer.error ?? (answer.status === 201 ? null : answer.json?.error?.code ?? `HTTP ${answer.status}`),
      };
    });
    return out;
  },

  async stop() {
    await agent.close().catch(() => {});
    setTimeout(() => process.exit(0), 50);
    return {};
  },
});
