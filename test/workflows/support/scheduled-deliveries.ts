// A workflow interceptor module for tests (bundled into the sandbox): tells the worker's
// `scheduled` sink the delivery id of each delivery a workflow schedules, replays included, so
// that a test can compare the ids a replay makes with the ones the run made.
import { proxySinks, type Sinks, type WorkflowInterceptorsFactory } from '@temporalio/workflow';
import type { EventDelivery } from '../../../src/contract/payloads';

export interface ScheduledDeliveries extends Sinks {
  scheduled: { delivery(deliveryId: string): void };
}

const { scheduled } = proxySinks<ScheduledDeliveries>();

export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [
    {
      scheduleLocalActivity(input, next) {
        if (input.activityType === 'deliverEvent') scheduled.delivery((input.args[0] as EventDelivery).delivery.deliveryId);
        return next(input);
      },
    },
  ],
});
