export { registerWebhook } from './register-webhook';
export { pingWebhook } from './ping-webhook';
export {
  webhookLifecycle,
  lifecycleStateQuery,
  deliveryOutcomesSignal,
  setStatusUpdate,
  deleteWebhookUpdate,
} from './webhook-lifecycle';
export { deliverListWrite } from './deliver-list-write';
export { deliverListWriteBatch } from './deliver-list-write-batch';
export { pruneRecords } from './prune-records';
