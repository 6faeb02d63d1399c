import { describe, expect, it } from 'vitest';
import { batchedOneAtATime, isTransient } from '../../activities/batched-statements';

/** An error as postgres.js rejects a query with: its SQLSTATE or connection code in `code`. */
function errorWithCode(code: string): Error {
  return Object.assign(new Error(`failed with ${code}`), { code });
}

const NOT_NULL_VIOLATION = errorWithCode('23502');
const DEADLOCK = errorWithCode('40P01');

/**
 * A statement that answers each row with ten times it, unless `fail` (given the batch and how
 * many statements ran before) throws; every batch it was given, in order, in `batches`.
 */
function fakeStatement(fail: (batch: readonly number[], before: number) => Error | undefined = () => undefined) {
  const batches: number[][] = [];
  const run = (batch: readonly number[]) => {
    const error = fail(batch, batches.length);
    batches.push([...batch]);
    return error ? Promise.reject(error) : Promise.resolve(batch.map((row) => row * 10));
  };
  return { run, batches };
}

/** Loads `rows` in one turn of the event loop (one batch), and what each call came to. */
function loadTogether(run: (batch: readonly number[]) => Promise<number[]>, rows: number[]) {
  const loader = batchedOneAtATime(run);
  return Promise.allSettled(rows.map((row) => loader.load(row)));
}

const rows = (count: number) => Array.from({ length: count }, (_, i) => i + 1);

describe('isTransient', () => {
  it('holds for deadlocks, serialization failures, cancelled statements and lost connections, not for what a row causes', () => {
    const transient = ['40P01', '40001', '57014', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT'];
    const sockets = ['ECONNRESET', 'ECONNREFUSED'];
    for (const code of [...transient, ...sockets]) expect(isTransient(errorWithCode(code)), code).toBe(true);
    // A not-null violation, a character PostgreSQL cannot store, a unique violation, a plain error.
    for (const error of [NOT_NULL_VIOLATION, errorWithCode('22P05'), errorWithCode('23505'), new Error('no code')])
      expect(isTransient(error), error.message).toBe(false);
  });
});

describe('batchedOneAtATime: a failed statement fails only what cannot be written', () => {
  it('fails a bad row among 7 good ones alone, and answers the others', async () => {
    const statement = fakeStatement((batch) => (batch.includes(5) ? NOT_NULL_VIOLATION : undefined));
    const settled = await loadTogether(statement.run, rows(8));
    expect(settled).toEqual(
      rows(8).map((row) => (row === 5 ? { status: 'rejected', reason: NOT_NULL_VIOLATION } : { status: 'fulfilled', value: row * 10 })),
    );
    expect(statement.batches[0]).toEqual(rows(8));
  });

  it('tries a batch again after a deadlock, up to three tries, and then answers every row', async () => {
    const statement = fakeStatement((_batch, before) => (before < 2 ? DEADLOCK : undefined));
    const settled = await loadTogether(statement.run, rows(8));
    expect(settled).toEqual(rows(8).map((row) => ({ status: 'fulfilled', value: row * 10 })));
    // The same batch each time: a transient error says nothing of its rows.
    expect(statement.batches).toEqual([rows(8), rows(8), rows(8)]);
  });

  it("fails the batch's rows once a transient error has failed three tries", async () => {
    const statement = fakeStatement(() => DEADLOCK);
    const settled = await loadTogether(statement.run, rows(8));
    expect(settled).toEqual(rows(8).map(() => ({ status: 'rejected', reason: DEADLOCK })));
    expect(statement.batches).toEqual([rows(8), rows(8), rows(8)]);
  });

  it('finds one bad row among 64 in two statements per halving: 1 + 2 × log2(64)', async () => {
    for (const bad of [1, 37, 64]) {
      const statement = fakeStatement((batch) => (batch.includes(bad) ? NOT_NULL_VIOLATION : undefined));
      const settled = await loadTogether(statement.run, rows(64));
      expect(settled.filter(({ status }) => status === 'rejected')).toHaveLength(1);
      expect(statement.batches, `bad row ${bad}`).toHaveLength(1 + 2 * 6);
    }
  });
});
