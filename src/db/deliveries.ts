import type { DeliveryResult } from '../types';
import type { Db } from './sql';

export interface DeliveryRecord {
  id: string;
  webhookId: string;
  kind: 'event' | 'ping';
  event: string;
  listId: string | null;
  cursor: number | null;
  at: string | null;
  result: DeliveryResult;
}

export async function recordDelivery(sql: Db, delivery: DeliveryRecord): Promise<void> {
  const { result } = delivery;
  await sql`
    INSERT INTO deliveries (id, webhook_id, kind, event, list_id, cursor, at, outcome, status_code, error, duration_ms)
    SELECT ${delivery.id}, ${delivery.webhookId}, ${delivery.kind}, ${delivery.event}, ${delivery.listId},
           ${delivery.cursor}, ${delivery.at}, ${result.delivered ? 'delivered' : 'failed'}, ${result.statusCode},
           ${result.error}, ${result.durationMs}
    WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = ${delivery.webhookId})`;
}
