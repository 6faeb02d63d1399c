// Child process: the open-loop load generator. Request i is due at t0 = start + i / rate,
// whether or not earlier ones have been answered; every latency is taken from t0, so a
// generator (or a connection pool) that falls behind shows up in the figures.
import { Agent, request } from 'undici';
import { type ListChange } from '../../src/objects';
import { serveRpc, type Served } from './lib/ipc';
import { openPublisher, type WriteDoor } from './lib/publishers';
import { type Writes } from './lib/ledger';
import { nowMs } from './lib/stats';

const agent = new Agent({ connections: 512, keepAliveTimeout: 30_000, headersTimeout: 0, bodyTimeout: 0 });

/**
 * Fires fire(i, t0) for i = 0..count-1 at t0 = startAt + i * 1000 / rate; resolves when every
 * returned promise has settled.
 * @param startAt epoch ms
 */
function openLoop(count: number, rate: number, startAt: number, fire: (i: number, t0: number) => Promise<void>): Promise<void> {
  const interval = 1000 / rate;
  const inFlight: Promise<void>[] = [];
  let i = 0;
  return new Promise<void>((resolve) => {
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
  });
}

/** The JSON answer of the API, as far as the generator reads it. */
interface AnswerJson {
  id?: string;
  secret?: string;
  cursor?: unknown;
  error?: { code?: string };
}

/** One request (a JSON body, or none): its status and JSON answer, or the error that ended it (status 0). */
async function callJson(
  method: 'GET' | 'POST',
  url: string,
  token: string,
  body: string | undefined,
  timeoutMs: number,
): Promise<{ status: number; json: AnswerJson | null; error: string | null }> {
  try {
    const response = await request(url, {
      method,
      dispatcher: agent,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.body.text();
    let json: AnswerJson | null = null;
    try {
      json = text ? (JSON.parse(text) as AnswerJson | null) : null;
    } catch {
      // not JSON: keep the status only
    }
    return { status: response.statusCode, json, error: null };
  } catch (error) {
    return { status: 0, json: null, error: (error as { code?: string } | null)?.code ?? String(error) };
  }
}

/**
 * A write of about 1 KiB: `changes` item.added changes with long item ids (topics list.changed
 * and item.added). With `joinedAccountId`, a member of the list already, it also removes and
 * checks an item and says that member joined, so that it fires every topic and changes no
 * membership.
 */
function writeBody(writeId: string, changes: number, joinedAccountId?: string, listId?: string): string {
  const list: ListChange[] = [];
  for (let k = 0; k < changes; k++) list.push({ type: 'item.added', itemId: `item-${writeId}-${k}-${'x'.repeat(64)}` });
  if (joinedAccountId !== undefined)
    list.push(
      { type: 'item.removed', itemId: `item-${writeId}-0` },
      { type: 'item.checked', itemId: `item-${writeId}-1` },
      { type: 'member.joined', accountId: joinedAccountId },
    );
  // Published to a broker, a write names its list (docs/operating.md); to the route, its path does.
  return JSON.stringify(listId === undefined ? { writeId, changes: list } : { listId, writeId, changes: list });
}

/** The answers of requests column-wise: when each was due, when it was answered, its status (0: no answer). */
export interface Calls {
  t0: number[];
  doneAt: number[];
  status: number[];
}

export interface WritesRequest {
  baseUrl: string;
  token: string;
  lists: string[];
  rate: number;
  durationMs: number;
  startAt: number;
  writeIdPrefix: string;
  changes: number;
  timeoutMs: number;
  /** Writes that fire every topic: see writeBody. */
  joinedAccountId?: string;
  /** Publish the writes to this broker instead of the route: accepted (202) once the broker holds each; no cursor. */
  door?: WriteDoor;
}

/** Sends write i: to the route, or published to the door's broker. */
type SendWrite = (
  listId: string,
  body: string,
  writeId: string,
) => Promise<{ status: number; cursor: number | null; error: string | null }>;

async function writeSender(
  baseUrl: string,
  token: string,
  timeoutMs: number,
  door: WriteDoor | undefined,
): Promise<[SendWrite, () => Promise<void>]> {
  if (door === undefined) {
    const send: SendWrite = async (listId, body) => {
      const answer = await callJson('POST', `${baseUrl}/internal/v3/lists/${encodeURIComponent(listId)}/writes`, token, body, timeoutMs);
      return {
        status: answer.status,
        cursor: answer.status === 202 ? Number(answer.json?.cursor) : null,
        error: answer.error ?? (answer.status === 202 ? null : (answer.json?.error?.code ?? `HTTP ${answer.status}`)),
      };
    };
    return [send, async () => {}];
  }
  const publisher = await openPublisher(door);
  const send: SendWrite = async (listId, body, writeId) => {
    try {
      await publisher.publish(body, `${listId}:${writeId}`);
      return { status: 202, cursor: null, error: null };
    } catch (error) {
      return { status: 0, cursor: null, error: (error as { code?: string } | null)?.code ?? String(error) };
    }
  };
  return [send, () => publisher.close()];
}

export interface Registration {
  i: number;
  t0: number;
  doneAt: number;
  status: number;
  webhookId: string | null;
  secret: string | null;
  error: string | null;
}

const handlers = {
  /**
   * Writes at `rate` per second for `durationMs`, to lists[i % lists.length], from `startAt`.
   * Returns one record per write, column-wise.
   */
  async writes({
    baseUrl,
    token,
    lists,
    rate,
    durationMs,
    startAt,
    writeIdPrefix,
    changes,
    timeoutMs,
    joinedAccountId,
    door,
  }: WritesRequest): Promise<Writes> {
    const count = Math.round((rate * durationMs) / 1000);
    const out: Writes = {
      writeId: [],
      list: [],
      t0: [],
      sentLag: [],
      doneAt: [],
      status: [],
      cursor: [],
      error: [],
      bodyBytes: 0,
      maxInFlight: 0,
    };
    let inFlight = 0;
    const bodies: string[] = [];
    for (let i = 0; i < count; i++) {
      bodies.push(writeBody(`${writeIdPrefix}-${i}`, changes, joinedAccountId, door && lists[i % lists.length]));
    }
    out.bodyBytes = bodies[0] ? Buffer.byteLength(bodies[0]) : 0;
    const [send, close] = await writeSender(baseUrl, token, timeoutMs, door);
    await openLoop(count, rate, startAt, async (i, t0) => {
      const listId = lists[i % lists.length];
      out.writeId[i] = `${writeIdPrefix}-${i}`;
      out.list[i] = listId;
      out.t0[i] = t0;
      out.sentLag[i] = nowMs() - t0;
      inFlight++;
      if (inFlight > out.maxInFlight) out.maxInFlight = inFlight;
      const answer = await send(listId, bodies[i], out.writeId[i]);
      out.doneAt[i] = nowMs();
      inFlight--;
      out.status[i] = answer.status;
      out.cursor[i] = answer.cursor;
      out.error[i] = answer.error;
    });
    await close();
    return out;
  },

  /** Registers items[i] at `rate` per second from `startAt`; one record per registration. */
  async registrations({
    baseUrl,
    items,
    rate,
    startAt,
    timeoutMs,
  }: {
    baseUrl: string;
    items: { token: string; url: string; events?: string[] }[];
    rate: number;
    startAt: number;
    timeoutMs: number;
  }) {
    const out: Registration[] = [];
    await openLoop(items.length, rate, startAt, async (i, t0) => {
      const { token, url, events } = items[i];
      const answer = await callJson('POST', `${baseUrl}/v3/webhooks`, token, JSON.stringify(events ? { url, events } : { url }), timeoutMs);
      out[i] = {
        i,
        t0,
        doneAt: nowMs(),
        status: answer.status,
        webhookId: answer.json?.id ?? null,
        secret: answer.json?.secret ?? null,
        error: answer.error ?? (answer.status === 201 ? null : (answer.json?.error?.code ?? `HTTP ${answer.status}`)),
      };
    });
    return out;
  },

  /** GETs `path` at `rate` per second for `durationMs`, from `startAt`; one record per request. */
  async reads({
    baseUrl,
    token,
    path,
    rate,
    durationMs,
    startAt,
    timeoutMs,
  }: {
    baseUrl: string;
    token: string;
    path: string;
    rate: number;
    durationMs: number;
    startAt: number;
    timeoutMs: number;
  }): Promise<Calls> {
    const out: Calls = { t0: [], doneAt: [], status: [] };
    await openLoop(Math.round((rate * durationMs) / 1000), rate, startAt, async (i, t0) => {
      out.t0[i] = t0;
      out.status[i] = (await callJson('GET', `${baseUrl}${path}`, token, undefined, timeoutMs)).status;
      out.doneAt[i] = nowMs();
    });
    return out;
  },

  async stop() {
    await agent.close().catch(() => {});
    setTimeout(() => process.exit(0), 50);
    return {};
  },
};
serveRpc(handlers);

export type GeneratorApi = Served<typeof handlers>;
