// Each account's turns (src/api/account-turns.ts): at most the cap of one account's requests
// run at once in a process, the others wait in the order they came, and no account waits for
// another's. Through the real API: the rate-limit tests (rate-limits.test.ts) and the flood
// phases of the bench.
import { describe, expect, it } from 'vitest';
import { createAccountTurns } from '../../src/api/account-turns';
import { metrics } from '../../src/metrics';

/** A piece of work that runs until the test ends it, and says when it started. */
function heldWork(log: string[], name: string) {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  return {
    end,
    work: async () => {
      log.push(`start ${name}`);
      await ended;
      log.push(`end ${name}`);
      return name;
    },
  };
}

/** Lets every promise callback that is due run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('account turns', () => {
  it('runs at most the cap of one account at once, the others in the order they came, and no other account waits', async () => {
    const inTurn = createAccountTurns(2);
    const log: string[] = [];
    const a = ['a1', 'a2', 'a3', 'a4'].map((name) => heldWork(log, name));
    const b = heldWork(log, 'b1');
    const answers = a.map((held) => inTurn('account-a', held.work));
    const other = inTurn('account-b', b.work);
    await settle();
    expect(log).toEqual(['start a1', 'start a2', 'start b1']);
    expect(await metrics.requestsWaiting.get()).toMatchObject({ values: [{ value: 2 }] });

    // The second one ends first: the third takes its place, the fourth still waits.
    a[1].end();
    await settle();
    expect(log).toEqual(['start a1', 'start a2', 'start b1', 'end a2', 'start a3']);
    a[0].end();
    await settle();
    expect(log.slice(5)).toEqual(['end a1', 'start a4']);
    expect(await metrics.requestsWaiting.get()).toMatchObject({ values: [{ value: 0 }] });

    a[2].end();
    a[3].end();
    b.end();
    expect(await Promise.all([...answers, other])).toEqual(['a1', 'a2', 'a3', 'a4', 'b1']);
  });

  it('passes the turn on when a request fails, and starts afresh once an account has none running', async () => {
    const inTurn = createAccountTurns(1);
    const log: string[] = [];
    const first = heldWork(log, 'first');
    const failing = inTurn('account-a', async () => {
      await first.work();
      throw new Error('refused');
    });
    const second = heldWork(log, 'second');
    const after = inTurn('account-a', second.work);
    await settle();
    expect(log).toEqual(['start first']);
    first.end();
    await expect(failing).rejects.toThrow('refused');
    await settle();
    expect(log).toEqual(['start first', 'end first', 'start second']);
    second.end();
    expect(await after).toBe('second');

    // Nothing running: the next one starts at once.
    const again = heldWork(log, 'again');
    const answer = inTurn('account-a', again.work);
    await settle();
    expect(log.at(-1)).toBe('start again');
    again.end();
    expect(await answer).toBe('again');
  });
});
