// Statements that gather the calls of many deliveries (of other writes and accounts) and run
// one at a time: what keeps one call's failure, or one slow statement, from failing or holding
// all the others.
import { setTimeout as sleep } from 'node:timers/promises';
import DataLoader from 'dataloader';

/**
 * How long a bookkeeping statement may run before PostgreSQL cancels it (57014, retried as
 * transient). A statement holds the rows of deliveries of many writes and accounts, and the
 * next one waits for its answer: one slow statement (a row lock held elsewhere, a stalled
 * server) must not hold every account's rows in the process. A batch's statement takes a few
 * milliseconds (0.04 ms a row, docs/performance.md), so a second is far beyond a healthy one.
 */
export const BOOKKEEPING_STATEMENT_TIMEOUT_MS = 1000;

/**
 * The waits before a batch's statement is tried again after a transient error, one per retry:
 * three tries in all, short enough that the batches behind it (which wait for its answer)
 * hardly notice.
 */
const TRANSIENT_RETRY_DELAYS_MS = [20, 40];

/**
 * PostgreSQL's deadlock (40P01), serialization failure (40001) and cancelled statement (57014,
 * the statement time-out); postgres.js's lost, ended or unopened connections; the socket's.
 */
const TRANSIENT_CODES = new Set([
  '40P01',
  '40001',
  '57014',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  'ECONNRESET',
  'ECONNREFUSED',
]);

/** Whether the same statement, tried again, may well succeed: nothing in its rows caused `error`. */
export function isTransient(error: unknown): boolean {
  return error instanceof Error && 'code' in error && TRANSIENT_CODES.has(String(error.code));
}

/**
 * A loader whose statements run one at a time: a batch is sent `gatherMs` after its first
 * call came (at the end of that call's turn of the event loop, with 0), or as soon as it holds
 * `maxBatchSize` calls, and never before the statement ahead of it has answered. Idle, a call
 * waits for nothing more; busy, the calls that come while a statement runs go together in the
 * next one (a group commit) instead of queueing a statement each.
 *
 * A failed statement fails only the calls that cannot be answered (`answersOf`).
 */
export function batchedOneAtATime<K, V>(
  run: (batch: readonly K[]) => Promise<V[]>,
  { gatherMs = 0, maxBatchSize = 500 } = {},
): DataLoader<K, V> {
  let running: Promise<unknown> = Promise.resolve();
  /** Settles once the last batch sent so far has its answer: the next waits for it. */
  let sent: Promise<unknown> = Promise.resolve();
  /** Sends the batch being gathered; null once it is sent. */
  let sendGathering: (() => void) | null = null;
  return new DataLoader<K, V>(
    (batch) => {
      const answers = answersOf(run, batch);
      running = answers;
      return answers;
    },
    {
      cache: false, // every call is work to do, never an answer to reuse
      maxBatchSize,
      batchScheduleFn: (send) => {
        // DataLoader opens a batch while another still gathers only when that one is full.
        sendGathering?.();
        const sendOnce = () => {
          if (sendGathering !== sendOnce) return;
          sendGathering = null;
          sent = sent.then(
            () =>
              new Promise((answered) =>
                setImmediate(() => {
                  send();
                  void running.then(answered);
                }),
              ),
          );
        };
        sendGathering = sendOnce;
        if (gatherMs === 0) sendOnce();
        else setTimeout(sendOnce, gatherMs);
      },
    },
  );
}

/**
 * The answer of each call of `batch`, or the error that fails it alone; never rejects. A
 * transient error tries the same batch again, up to three tries; the last one's error fails
 * every call. Any other error splits the batch in halves, each answered the same way, down to
 * single calls: a call whose own statement fails gets its error, every other its answer, at
 * two more statements per halving for one bad call among many.
 */
async function answersOf<K, V>(run: (batch: readonly K[]) => Promise<V[]>, batch: readonly K[]): Promise<(V | Error)[]> {
  for (let retry = 0; ; retry++) {
    try {
      return await run(batch);
    } catch (error) {
      if (isTransient(error)) {
        if (retry < TRANSIENT_RETRY_DELAYS_MS.length) {
          await sleep(TRANSIENT_RETRY_DELAYS_MS[retry]);
          continue;
        }
        return batch.map(() => asError(error));
      }
      if (batch.length === 1) return [asError(error)];
      const half = Math.ceil(batch.length / 2);
      return [...(await answersOf(run, batch.slice(0, half))), ...(await answersOf(run, batch.slice(half)))];
    }
  }
}

/** DataLoader fails a call whose answer is an Error: anything else thrown is wrapped in one. */
function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
