// The workflow types the worker registers: each implements its signature in
// src/contract/workflows.ts, by which the client starts it. The tracing interceptors beside
// them (tracing-interceptors.ts) are not among them: the worker bundles those only with
// tracing on (src/temporal/tracing.ts).
export { registerWebhook } from './register-webhook';
export { pingWebhook } from './ping-webhook';
export { redeliverEvent } from './redeliver-event';
export { sendTestEvent } from './send-test-event';
export { webhookLifecycle } from './webhook-lifecycle';
export { deliverListWrite } from './deliver-list-write';
export { deliverListWriteBatch } from './deliver-list-write-batch';
export { pruneRecords } from './prune-records';
export { recoverDeliveries } from './recover-deliveries';
export { mailNotice } from './mail-notice';
export { probePausedWebhooks } from './probe-paused-webhooks';
export { reencryptSecrets } from './reencrypt-secrets';
