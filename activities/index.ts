// Every side effect of the workflows, by concern. Secrets are read in the activities, from
// PostgreSQL, and never returned: nothing an activity takes or gives may hold one, since
// both travel through Temporal.
import { createDeliveryBookkeeping } from '../src/delivery/bookkeeping';
import { createDeliveryActivities } from './deliveries';
import type { ActivityDependencies } from './dependencies';
import { createNoticeActivities } from './notices';
import { createRecoveryActivities } from './recoveries';
import { createRegistrationActivities } from './registration';
import { createRetentionActivities } from './retention';
import { createWebhookStateActivities } from './webhook-state';

export type { ActivityDependencies } from './dependencies';

export function createActivities(dependencies: ActivityDependencies) {
  const bookkeeping = createDeliveryBookkeeping(dependencies.sql, dependencies.client);
  return {
    ...createRegistrationActivities(dependencies),
    ...createDeliveryActivities(dependencies, bookkeeping),
    ...createRecoveryActivities(dependencies, bookkeeping),
    ...createWebhookStateActivities(dependencies),
    ...createRetentionActivities(dependencies),
    ...createNoticeActivities(dependencies),
  };
}

export type Activities = ReturnType<typeof createActivities>;
