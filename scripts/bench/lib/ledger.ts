// The ledger and the figures of one step: every accepted write must come out as deliveries
// that were received (and recorded as delivered), recorded as failed, skipped (the service
// says so: the webhook was paused), or missing.
import { percentiles, round } from './stats';

/** The generator's record of a step's writes, column-wise. */
export interface Writes {
  writeId: string[];
  list: string[];
  t0: number[];
  sentLag: number[];
  doneAt: number[];
  status: number[];
  cursor: (number | null)[];
  error: (string | null)[];
  bodyBytes: number;
  /** Most requests waiting for an answer at once. */
  maxInFlight: number;
}
/** What the receivers got (or the floor completed), column-wise. */
export interface Receipts {
  t: number[];
  webhook: string[];
  list: string[];
  cursor: number[];
  event: string[];
  sigOk: number[];
  status: number[];
}
export function emptyReceipts(): Receipts {
  return { t: [], webhook: [], list: [], cursor: [], event: [], sigOk: [], status: [] };
}
/** A delivery outcome as the system under test recorded it. */
export interface Recorded {
  webhook: string;
  list: string;
  cursor: number;
  event: string;
  delivered: boolean;
}
/** list id -> who receives its writes, on which topic. */
export type Recipients = Map<string, { webhookId: string; topic: string }[]>;

export interface StepInput {
  writes: Writes;
  receipts: Receipts;
  recorded: Recorded[];
  recipients: Recipients;
  steadyFrom: number;
  steadyMs: number;
  recordsPrunedUnseen?: number;
  skipped?: Set<string>;
}

/** A step's writes, deliveries, latencies and ledger (lib/types.ts's StepResult adds what was measured around them). */
export type StepFigures = ReturnType<typeof computeStep>;

export function computeStep({
  writes,
  receipts,
  recorded,
  recipients,
  steadyFrom,
  steadyMs,
  recordsPrunedUnseen = 0,
  skipped = new Set(),
}: StepInput) {
  const n = writes.t0.length;
  /** list|cursor -> write index */
  const writeOf = new Map<string, number>();
  const acceptSteady: number[] = [];
  const acceptAll: number[] = [];
  const rejected: Record<string, number> = {};
  let accepted = 0;
  let acceptedSteady = 0;
  let steadyWrites = 0;
  const sendLag: number[] = [];
  const expected = new Set<string>();
  for (let i = 0; i < n; i++) {
    const steady = writes.t0[i] >= steadyFrom;
    if (steady) steadyWrites++;
    sendLag.push(writes.sentLag[i]);
    if (writes.status[i] !== 202) {
      const reason = writes.error[i] ?? `HTTP ${writes.status[i]}`;
      rejected[reason] = (rejected[reason] ?? 0) + 1;
      continue;
    }
    accepted++;
    const latency = writes.doneAt[i] - writes.t0[i];
    acceptAll.push(latency);
    if (steady) {
      acceptedSteady++;
      acceptSteady.push(latency);
    }
    const list = writes.list[i];
    writeOf.set(`${list}|${writes.cursor[i]}`, i);
    for (const { webhookId, topic } of recipients.get(list) ?? []) expected.add(`${webhookId}|${list}|${writes.cursor[i]}|${topic}`);
  }

  const received = new Map<string, { count: number; t: number; ok: boolean; status: number }>();
  let badSignatures = 0;
  for (let j = 0; j < receipts.t.length; j++) {
    const key = `${receipts.webhook[j]}|${receipts.list[j]}|${receipts.cursor[j]}|${receipts.event[j]}`;
    const ok = receipts.sigOk[j] === 1;
    if (!ok) badSignatures++;
    const seen = received.get(key);
    if (seen) seen.count++;
    else received.set(key, { count: 1, t: receipts.t[j], ok, status: receipts.status[j] });
  }
  const records = new Map<string, { count: number; delivered: boolean }>();
  for (const r of recorded) {
    const key = `${r.webhook}|${r.list}|${r.cursor}|${r.event}`;
    const seen = records.get(key);
    if (seen) {
      seen.count++;
      seen.delivered = r.delivered;
    } else records.set(key, { count: 1, delivered: r.delivered });
  }

  let delivered = 0;
  let failedRecorded = 0;
  let skippedPaused = 0;
  let receivedUnrecorded = 0;
  const missing: { key: string; why: string }[] = [];
  const duplicates: { key: string; received: number; recorded: number }[] = [];
  const e2eSteady: number[] = [];
  const e2eAll: number[] = [];
  let deliveredSteady = 0;
  for (const key of expected) {
    const got = received.get(key);
    const rec = records.get(key);
    if ((got && got.count > 1) || (rec && rec.count > 1)) duplicates.push({ key, received: got?.count ?? 0, recorded: rec?.count ?? 0 });
    if (got) {
      const [, list, cursor] = key.split('|');
      const i = writeOf.get(`${list}|${cursor}`)!;
      const latency = got.t - writes.t0[i];
      e2eAll.push(latency);
      if (writes.t0[i] >= steadyFrom) {
        e2eSteady.push(latency);
        deliveredSteady++;
      }
    }
    if (rec && !rec.delivered) failedRecorded++;
    else if (rec && got) delivered++;
    else if (rec) missing.push({ key, why: 'recorded as delivered, never received' });
    else if (got) receivedUnrecorded++;
    else if (skipped.has(key)) skippedPaused++;
    else missing.push({ key, why: 'neither received nor recorded' });
  }
  // Rows the service logged but pruned (it keeps the newest 1000 per webhook) before the
  // harness read them: a receipt without its row is then no loss.
  const explained = Math.min(receivedUnrecorded, recordsPrunedUnseen);
  delivered += explained;
  for (let k = explained; k < receivedUnrecorded; k++) missing.push({ key: '(one of the received)', why: 'received, never recorded' });

  const unexpectedReceipts = [...received.keys()].filter((key) => !expected.has(key));
  const unexpectedRecords = [...records.keys()].filter((key) => !expected.has(key));
  const ledger = {
    sent: expected.size,
    delivered,
    failedRecorded,
    skipped: skippedPaused,
    missing: missing.length,
    duplicates: duplicates.length,
    badSignatures,
    unexpected: unexpectedReceipts.length + unexpectedRecords.length,
    recordsPrunedUnseen,
    balanced:
      expected.size === delivered + failedRecorded + skippedPaused + missing.length &&
      missing.length === 0 &&
      duplicates.length === 0 &&
      badSignatures === 0 &&
      unexpectedReceipts.length + unexpectedRecords.length === 0,
    missingSample: missing.slice(0, 10),
    duplicateSample: duplicates.slice(0, 10),
    unexpectedSample: [...unexpectedReceipts, ...unexpectedRecords].slice(0, 10),
  };

  const steadySec = steadyMs / 1000;
  return {
    writes: { scheduled: n, steady: steadyWrites, accepted, rejected, bodyBytes: writes.bodyBytes, maxInFlight: writes.maxInFlight },
    acceptedPerSec: round(acceptedSteady / steadySec),
    deliveriesPerSec: round(deliveredSteady / steadySec),
    deliveriesTotal: e2eAll.length,
    acceptMs: percentiles(acceptSteady),
    e2eMs: percentiles(e2eSteady),
    acceptMsAllPhases: percentiles(acceptAll, [50, 99]),
    e2eMsAllPhases: percentiles(e2eAll, [50, 99]),
    generatorLagMs: percentiles(sendLag, [50, 99]),
    ledger,
  };
}
