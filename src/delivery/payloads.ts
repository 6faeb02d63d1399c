// The exact bodies sent to receivers. Key order is part of the contract.
import type { Topic } from '../topics';

export function pingPayload(webhookId: string, at: Date = new Date()): string {
  return JSON.stringify({ event: 'ping', webhookId, at: at.toISOString() });
}

/** `at` is already ISO 8601 UTC with milliseconds; every delivery of a write carries the same. */
export function eventPayload(event: Topic, listId: string, cursor: number, at: string): string {
  return JSON.stringify({ event, listId, cursor, at });
}
