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

/**
 * A step's writes, deliveries, latency percentiles and ledger (lib/types.ts's StepResult adds what was
 * measured around them).
 */
export type StepFigures = Omit<ReturnType<typeof computeStep>, 'e2eSamplesMs'>;

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
  const tally = tallyWrites(writes, recipients, steadyFrom);
  const received = indexReceipts(receipts);
  const records = indexRecords(recorded);
  const found = reconcile({ writes, tally, received, records, steadyFrom, recordsPrunedUnseen, skipped });
  const { expected } = tally;
  const unexpectedReceipts = [...received.byKey.keys()].filter((key) => !expected.has(key));
  const unexpectedRecords = [...records.keys()].filter((key) => !expected.has(key));
  const { delivered, failedRecorded, skippedPaused, missing, duplicates } = found;
  const ledger = {
    sent: expected.size,
    delivered,
    failedRecorded,
    skipped: skippedPaused,
    missing: missing.length,
    duplicates: duplicates.length,
    badSignatures: received.badSignatures,
    unexpected: unexpectedReceipts.length + unexpectedRecords.length,
    recordsPrunedUnseen,
    balanced:
      expected.size === delivered + failedRecorded + skippedPaused + missing.length &&
      missing.length === 0 &&
      duplicates.length === 0 &&
      received.badSignatures === 0 &&
      unexpectedReceipts.length + unexpectedRecords.length === 0,
    missingSample: missing.slice(0, 10),
    duplicateSample: duplicates.slice(0, 10),
    unexpectedSample: [...unexpectedReceipts, ...unexpectedRecords].slice(0, 10),
  };

  const steadySec = steadyMs / 1000;
  return {
    writes: {
      scheduled: writes.t0.length,
      steady: tally.steadyWrites,
      accepted: tally.accepted,
      rejected: tally.rejected,
      bodyBytes: writes.bodyBytes,
      maxInFlight: writes.maxInFlight,
    },
    acceptedPerSec: round(tally.acceptedSteady / steadySec),
    deliveriesPerSec: round(found.deliveredSteady / steadySec),
    deliveriesTotal: found.e2eAll.length,
    acceptMs: percentiles(tally.acceptSteady),
    e2eMs: percentiles(found.e2eSteady),
    /** The steady phase's end-to-end latencies, for a caller that pools them over steps (runStep's keepE2eSamples). */
    e2eSamplesMs: found.e2eSteady,
    acceptMsAllPhases: percentiles(tally.acceptAll, [50, 99]),
    e2eMsAllPhases: percentiles(found.e2eAll, [50, 99]),
    generatorLagMs: percentiles(tally.sendLag, [50, 99]),
    ledger,
  };
}

/** The writes' answers and accept latencies, and the deliveries (webhook|list|cursor|topic) each accepted one is due. */
function tallyWrites(writes: Writes, recipients: Recipients, steadyFrom: number) {
  const tally = {
    /** list|cursor -> write index */
    writeOf: new Map<string, number>(),
    expected: new Set<string>(),
    acceptSteady: [] as number[],
    acceptAll: [] as number[],
    rejected: {} as Record<string, number>,
    accepted: 0,
    acceptedSteady: 0,
    steadyWrites: 0,
    sendLag: [] as number[],
  };
  for (let i = 0; i < writes.t0.length; i++) {
    const steady = writes.t0[i] >= steadyFrom;
    if (steady) tally.steadyWrites++;
    tally.sendLag.push(writes.sentLag[i]);
    if (writes.status[i] !== 202) {
      const reason = writes.error[i] ?? `HTTP ${writes.status[i]}`;
      tally.rejected[reason] = (tally.rejected[reason] ?? 0) + 1;
      continue;
    }
    tally.accepted++;
    const latency = writes.doneAt[i] - writes.t0[i];
    tally.acceptAll.push(latency);
    if (steady) {
      tally.acceptedSteady++;
      tally.acceptSteady.push(latency);
    }
    const list = writes.list[i];
    tally.writeOf.set(`${list}|${writes.cursor[i]}`, i);
    for (const { webhookId, topic } of recipients.get(list) ?? []) tally.expected.add(`${webhookId}|${list}|${writes.cursor[i]}|${topic}`);
  }
  return tally;
}

/** The receipts by delivery key: how many, the first's time and answer; and the bad signatures. */
function indexReceipts(receipts: Receipts) {
  const byKey = new Map<string, { count: number; t: number; ok: boolean; status: number }>();
  let badSignatures = 0;
  for (let j = 0; j < receipts.t.length; j++) {
    const key = `${receipts.webhook[j]}|${receipts.list[j]}|${receipts.cursor[j]}|${receipts.event[j]}`;
    const ok = receipts.sigOk[j] === 1;
    if (!ok) badSignatures++;
    const seen = byKey.get(key);
    if (seen) seen.count++;
    else byKey.set(key, { count: 1, t: receipts.t[j], ok, status: receipts.status[j] });
  }
  return { byKey, badSignatures };
}

/** The service's log rows by delivery key: how many, and whether the last says delivered. */
function indexRecords(recorded: Recorded[]) {
  const records = new Map<string, { count: number; delivered: boolean }>();
  for (const r of recorded) {
    const key = `${r.webhook}|${r.list}|${r.cursor}|${r.event}`;
    const seen = records.get(key);
    if (seen) {
      seen.count++;
      seen.delivered = r.delivered;
    } else records.set(key, { count: 1, delivered: r.delivered });
  }
  return records;
}

/** Each due delivery against its receipts and its log rows: delivered, failed, skipped, missing or twice; and its latency. */
function reconcile({
  writes,
  tally,
  received,
  records,
  steadyFrom,
  recordsPrunedUnseen,
  skipped,
}: {
  writes: Writes;
  tally: ReturnType<typeof tallyWrites>;
  received: ReturnType<typeof indexReceipts>;
  records: ReturnType<typeof indexRecords>;
  steadyFrom: number;
  recordsPrunedUnseen: number;
  skipped: Set<string>;
}) {
  const found = {
    delivered: 0,
    failedRecorded: 0,
    skippedPaused: 0,
    deliveredSteady: 0,
    missing: [] as { key: string; why: string }[],
    duplicates: [] as { key: string; received: number; recorded: number }[],
    e2eSteady: [] as number[],
    e2eAll: [] as number[],
  };
  let receivedUnrecorded = 0;
  for (const key of tally.expected) {
    const got = received.byKey.get(key);
    const rec = records.get(key);
    if ((got && got.count > 1) || (rec && rec.count > 1))
      found.duplicates.push({ key, received: got?.count ?? 0, recorded: rec?.count ?? 0 });
    if (got) {
      const [, list, cursor] = key.split('|');
      const i = tally.writeOf.get(`${list}|${cursor}`)!;
      const latency = got.t - writes.t0[i];
      found.e2eAll.push(latency);
      if (writes.t0[i] >= steadyFrom) {
        found.e2eSteady.push(latency);
        found.deliveredSteady++;
      }
    }
    if (rec && !rec.delivered) found.failedRecorded++;
    else if (rec && got) found.delivered++;
    else if (rec) found.missing.push({ key, why: 'recorded as delivered, never received' });
    else if (got) receivedUnrecorded++;
    else if (skipped.has(key)) found.skippedPaused++;
    else found.missing.push({ key, why: 'neither received nor recorded' });
  }
  // Rows the service logged but pruned (it keeps the newest 1000 per webhook) before the
  // harness read them: a receipt without its row is then no loss.
  const explained = Math.min(receivedUnrecorded, recordsPrunedUnseen);
  found.delivered += explained;
  for (let k = explained; k < receivedUnrecorded; k++)
    found.missing.push({ key: '(one of the received)', why: 'received, never recorded' });
  return found;
}
