import { describe, expect, it } from 'vitest';
import { topicsOfWrite } from '../src/topics';

describe('topicsOfWrite', () => {
  it('fires each topic once, in the order of the topic list', () => {
    expect(topicsOfWrite([{ type: 'item.checked' }, { type: 'item.added' }, { type: 'item.checked' }])).toEqual([
      'list.changed',
      'item.added',
      'item.checked',
    ]);
    expect(topicsOfWrite([{ type: 'item.unchecked' }, { type: 'item.updated' }, { type: 'list.updated' }])).toEqual(['list.changed']);
    expect(topicsOfWrite([{ type: 'member.left' }, { type: 'item.removed' }])).toEqual([
      'list.changed',
      'item.removed',
      'list.members.changed',
    ]);
  });
});
