import { describe, expect, it } from 'vitest';
import { eventPayload, pingPayload } from '../../src/delivery/message';

describe('payloads', () => {
  it("keep the contract's key order", () => {
    expect(eventPayload('item.added', 'l1', 3, '2026-01-02T03:04:05.006Z')).toBe(
      '{"event":"item.added","listId":"l1","cursor":3,"at":"2026-01-02T03:04:05.006Z"}',
    );
    expect(pingPayload('wh_1', new Date('2026-01-02T03:04:05.006Z'))).toBe(
      '{"event":"ping","webhookId":"wh_1","at":"2026-01-02T03:04:05.006Z"}',
    );
  });
});
