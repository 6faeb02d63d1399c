// The floor's only workflow: a bare fan-out of no-op activities, one per recipient, all at
// once, each a single attempt. No database, no signals, no per-webhook state: what Temporal
// itself costs for a write's deliveries, which the service is measured against.
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';

export interface FloorDelivery {
  webhookId: string;
  listId: string;
  cursor: number;
  topic: string;
}
export interface FloorWrite {
  listId: string;
  cursor: number;
  topic: string;
  webhookIds: string[];
  local: boolean;
}
export interface FloorActivities {
  noop(delivery: FloorDelivery): Promise<void>;
}

const options = { startToCloseTimeout: '15 seconds', retry: { maximumAttempts: 1 } } as const;
const normal = proxyActivities<FloorActivities>(options);
const local = proxyLocalActivities<FloorActivities>(options);

export async function floorFanout(write: FloorWrite): Promise<void> {
  const { noop } = write.local ? local : normal;
  await Promise.all(
    write.webhookIds.map((webhookId) => noop({ webhookId, listId: write.listId, cursor: write.cursor, topic: write.topic })),
  );
}
