// The topics a webhook subscribes to, and the changes of a write that fire them.
export const TOPICS = ['list.changed', 'item.added', 'item.removed', 'item.checked', 'list.members.changed'] as const;
export type Topic = (typeof TOPICS)[number];
export const DEFAULT_TOPICS: Topic[] = ['list.changed'];

export const CHANGE_TYPES = [
  'item.added',
  'item.removed',
  'item.checked',
  'item.unchecked',
  'item.updated',
  'list.updated',
  'member.joined',
  'member.left',
] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

// What each change fires (docs/api.md, "Topics"). Every change fires the coarse list.changed.
const TOPICS_OF: Record<ChangeType, Topic[]> = {
  'item.added': ['item.added', 'list.changed'],
  'item.removed': ['item.removed', 'list.changed'],
  'item.checked': ['item.checked', 'list.changed'],
  'item.unchecked': ['list.changed'],
  'item.updated': ['list.changed'],
  'list.updated': ['list.changed'],
  'member.joined': ['list.members.changed', 'list.changed'],
  'member.left': ['list.members.changed', 'list.changed'],
};

/** The topics a write fires, each once however many changes fire it, in the order of TOPICS. */
export function topicsOfWrite(changes: readonly { type: ChangeType }[]): Topic[] {
  const fired = new Set(changes.flatMap((change) => TOPICS_OF[change.type]));
  return TOPICS.filter((topic) => fired.has(topic));
}
