export { registerWebhook } from './register-webhook';
export { pingWebhook } from './ping-webhook';
export { redeliverEvent } from './redeliver-event';
export { webhookLifecycle } from './webhook-lifecycle';
// Tests and scripts reach the workflow's messages here too.
export { lifecycleStateQuery, deliveryOutcomesSignal, setStatusUpdate, deleteWebhookUpdate } from '../src/temporal/webhook-messages';
export { deliverListWrite } from './deliver-list-write';
export { deliverListWriteBatch } from './deliver-list-write-batch';
export { pruneRecords } from './prune-records';
