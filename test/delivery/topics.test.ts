import { describe, expect, it } from 'vitest';
import { eventPayload, pingPayload } from '../../src/delivery/payloads';
import { topicsOfWrite } from '../../src/delivery/topics';

describe('topicsOfWrite', () => {
  it('fires each topic once, in the order of the topic list', () => {
    expect(topicsOfWrite([{ type: 'item.checked' }, { type: 'item.added' }, { type: 'item.checked' }])).toEqual([
      'list.changed',
      'item.added',
      'item.checked',
    ]);
    expect(topicsOfWrite([{ type: 'item.unchecked' }, { type: 'item.updated' }, { type: 'list.updated' }])).toEqual(['list.changed']);
    expect(topicsOfWrite([{ type: 'member.left' }, { type: 'item.removed' }])).toEqual(['list.changed', 'item.removed', 'list.members.changed']);
  });
});

describe('payloads', () => {
  it('keep the contract\'s key order', () => {
    expect(eventPayload('item.added', 'l1', 3, '2026-01-02T03:04:05.006Z')).toBe(
      '{"event":"item.added","listId":"l1","cursor":3,"at":"2026-01-02T03:04:05.006Z"}',
    );
    expect(pingPayload('wh_1', new Date('2026-01-02T03:04:05.006Z'))).toBe('{"event":"ping","webhookId":"wh_1","at":"2026-01-02T03:04:05.006Z"}');
  });
});
