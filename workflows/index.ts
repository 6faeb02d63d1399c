export { registerWebhook } from './register-webhook';
export { webhookLifecycle, lifecycleStateQuery, webhookDeletedSignal } from './webhook-lifecycle';
