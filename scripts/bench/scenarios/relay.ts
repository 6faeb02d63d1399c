// `split-relay`: what a relay session adds to a delivery. Each write goes to a direct webhook
// (the receivers) and to a relay session, whose deliveries a real `svc-webhooks listen`
// forwards to a local server of the bench.
import { randomBytes } from 'node:crypto';
import { CONFIG, log } from '../lib/config';
import { call } from '../lib/http';
import { scanLogs } from '../lib/logs';
import { accountWithList, startListen, startLocalServer } from '../lib/relay-cli';
import * as stack from '../lib/stack';
import { waitForQuiet } from '../lib/step';
import { nowMs, percentiles, round } from '../lib/stats';
import { type Context, type Outcome, type RelaySummary, type ServiceTarget, type WorkloadScenario } from '../lib/types';
import { serviceWorkload } from './service';

export const scenarios: WorkloadScenario[] = [
  serviceWorkload('relay', 'split', 'relay session beside a direct delivery (API + worker processes)', runRelay),
];

/** The writes as sent: when each left (epoch ms), its status (0: no answer) and cursor. */
interface SentWrites {
  t0: number[];
  status: number[];
  cursor: (number | null)[];
}

/**
 * One account owning one list, with a direct webhook on a receiver and a relay session of
 * `svc-webhooks listen` forwarding to a plain-http server in the bench; 300 writes of one
 * `list.updated` change each, open loop at 10/s. Each latency runs from the write's send (t0
 * taken just before the request) to the first receipt of its cursor on each side.
 */
async function runRelay(target: ServiceTarget, ctx: Context): Promise<Outcome> {
  const tag = randomBytes(3).toString('hex');
  const listId = `bench-${tag}-relay`;
  const account = await accountWithList(target, listId);
  const url = `https://127.0.0.1:${ctx.ports[0]}/relay-direct/${tag}`;
  const direct = await call<{ id: string; secret: string }>(target.baseUrl, 'POST', '/v3/webhooks', account.token, {
    url,
    events: ['list.changed'],
  });
  if (direct.status !== 201) throw new Error(`registering ${url} answered ${direct.status}: ${JSON.stringify(direct.body)}`);
  await ctx.receivers('secrets', { entries: [[direct.body.id, direct.body.secret]] });

  const local = await startLocalServer();
  try {
    const listen = await startListen(ctx, target, account.token, local.url);
    try {
      local.state.secret = listen.secret;
      log(`relay: session ${listen.sessionId} forwarding to ${local.url}; direct webhook ${direct.body.id}`);
      await ctx.receivers('take'); // forget the setup's receipts (the direct webhook's ping)
      const quiet = await waitForQuiet(ctx.sampler);
      const window = ctx.sampler.window();
      const writes = await sendWrites(target, listId, tag);
      const directByCursor = await waitForDeliveries(ctx, direct.body.id, local.byCursor, writes);
      const measured = window();
      const summary = relayFigures(writes, directByCursor, local.byCursor, local.state.badSignatures, quiet, measured);
      logRelay(summary);
      return { steps: [], knee: null, relay: summary, logs: scanLogs(target.logFiles) };
    } finally {
      await listen.stop();
    }
  } finally {
    await local.close();
  }
}

/** The writes, open loop: write i leaves at start + i / rate, whether or not earlier ones were answered. */
async function sendWrites(target: ServiceTarget, listId: string, tag: string): Promise<SentWrites> {
  const { writes: count, rate } = CONFIG.relay;
  const out: SentWrites = { t0: [], status: [], cursor: [] };
  const startAt = nowMs() + 100;
  const sent: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    await stack.sleep(Math.max(0, startAt + (i * 1000) / rate - nowMs()));
    sent.push(
      (async () => {
        const body = { writeId: `${tag}-${i}`, changes: [{ type: 'list.updated' }] };
        out.t0[i] = nowMs();
        let answer: { status: number; body: { cursor?: number } };
        try {
          answer = await target.internal('POST', `/internal/v3/lists/${encodeURIComponent(listId)}/writes`, body);
        } catch {
          answer = { status: 0, body: {} }; // no answer within the timeout
        }
        out.status[i] = answer.status;
        out.cursor[i] = answer.status === 202 ? Number(answer.body.cursor) : null;
      })(),
    );
  }
  await Promise.all(sent);
  return out;
}

/**
 * Polls until every accepted write was received on both sides, or CONFIG.relay.drainMs after
 * the last write was answered; returns the direct receipts' times by cursor (the local
 * server's fill `relayByCursor` meanwhile).
 */
async function waitForDeliveries(
  ctx: Context,
  webhookId: string,
  relayByCursor: Map<number, number[]>,
  writes: SentWrites,
): Promise<Map<number, number[]>> {
  const cursors = writes.cursor.filter((cursor): cursor is number => cursor !== null);
  const directByCursor = new Map<number, number[]>();
  const until = nowMs() + CONFIG.relay.drainMs;
  for (;;) {
    const receipts = await ctx.receivers('take');
    for (let j = 0; j < receipts.t.length; j++) {
      if (receipts.webhook[j] !== webhookId || receipts.event[j] !== 'list.changed') continue;
      directByCursor.set(receipts.cursor[j], [...(directByCursor.get(receipts.cursor[j]) ?? []), receipts.t[j]]);
    }
    if (cursors.every((cursor) => directByCursor.has(cursor) && relayByCursor.has(cursor)) || nowMs() > until) break;
    await stack.sleep(250);
  }
  return directByCursor;
}

function relayFigures(
  writes: SentWrites,
  directByCursor: Map<number, number[]>,
  relayByCursor: Map<number, number[]>,
  relayBadSignatures: number,
  quiet: RelaySummary['quiet'],
  cpu: RelaySummary['cpu'],
): RelaySummary {
  const { writes: count, rate } = CONFIG.relay;
  const direct: number[] = [];
  const relay: number[] = [];
  const paired: number[] = [];
  let accepted = 0;
  for (let i = 0; i < writes.t0.length; i++) {
    const cursor = writes.cursor[i];
    if (cursor === null) continue;
    accepted++;
    const d = directByCursor.get(cursor)?.[0];
    const r = relayByCursor.get(cursor)?.[0];
    if (d !== undefined) direct.push(d - writes.t0[i]);
    if (r !== undefined) relay.push(r - writes.t0[i]);
    if (d !== undefined && r !== undefined) paired.push(r - d);
  }
  const directMs = percentiles(direct, [50, 99]);
  const relayMs = percentiles(relay, [50, 99]);
  const twice = (byCursor: Map<number, number[]>) => [...byCursor.values()].filter((times) => times.length > 1).length;
  return {
    writes: count,
    rate,
    accepted,
    directMs,
    relayMs,
    addedP50Ms: directMs.p50 === null || relayMs.p50 === null ? null : round(relayMs.p50 - directMs.p50),
    pairedAddedMs: percentiles(paired, [50, 99]),
    directMissing: accepted - direct.length,
    relayMissing: accepted - relay.length,
    duplicates: { direct: twice(directByCursor), relay: twice(relayByCursor) },
    relayBadSignatures,
    quiet,
    cpu,
  };
}

function logRelay(s: RelaySummary): void {
  log(
    `relay: ${s.accepted}/${s.writes} writes accepted at ${s.rate}/s; direct p50/p99 ${s.directMs.p50}/${s.directMs.p99} ms, ` +
      `relay p50/p99 ${s.relayMs.p50}/${s.relayMs.p99} ms, added at p50 ${s.addedP50Ms} ms ` +
      `(per write p50/p99 ${s.pairedAddedMs.p50}/${s.pairedAddedMs.p99} ms); missing ${s.directMissing} direct, ${s.relayMissing} relay; ` +
      `twice ${s.duplicates.direct} direct, ${s.duplicates.relay} relay; ${s.relayBadSignatures} bad signatures relayed`,
  );
}
