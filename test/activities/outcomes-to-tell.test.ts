// What an event delivery tells `webhook/{id}` once its row is logged (outcomesToTell): the
// count must not differ from the log, and a success logged before an earlier failure must
// still reach the count.
import { describe, expect, it } from 'vitest';
import { outcomesToTell } from '../../activities/delivery-bookkeeping';

const endedAt = 1_000;
const failure = { delivered: false, endedAt };
const success = { delivered: true, endedAt };

describe('outcomesToTell', () => {
  it('tells nothing for a row that is not its own: a timed-out run whose delivery was logged as our own failure first', () => {
    expect(outcomesToTell('dlv_1', failure, { logged: false, failuresToReset: true, lastDeliveredAt: null })).toEqual([]);
  });

  it('tells a failure, and a success only when it has a failure to reset', () => {
    expect(outcomesToTell('dlv_1', failure, { logged: true, failuresToReset: true, lastDeliveredAt: null })).toEqual([
      { deliveryId: 'dlv_1', ...failure },
    ]);
    expect(outcomesToTell('dlv_2', success, { logged: true, failuresToReset: false, lastDeliveredAt: endedAt })).toEqual([]);
    expect(outcomesToTell('dlv_2', success, { logged: true, failuresToReset: true, lastDeliveredAt: endedAt })).toEqual([
      { deliveryId: 'dlv_2', ...success },
    ]);
  });

  it('tells with a failure the success that ended after it but was logged first, which told nothing', () => {
    expect(outcomesToTell('dlv_1', failure, { logged: true, failuresToReset: true, lastDeliveredAt: endedAt + 40 })).toEqual([
      { deliveryId: 'dlv_1', ...failure },
      { delivered: true, endedAt: endedAt + 40 },
    ]);
    // A success that ended before it has nothing more to say.
    expect(outcomesToTell('dlv_1', failure, { logged: true, failuresToReset: true, lastDeliveredAt: endedAt - 40 })).toEqual([
      { deliveryId: 'dlv_1', ...failure },
    ]);
  });
});
