// Every side effect of the workflows, by concern. Secrets are read in the activities, from
// PostgreSQL, and never returned: nothing an activity takes or gives may hold one, since
// both travel through Temporal.
import type { ActivityTypes } from '../src/contract/activities';
import { createDeliveryBookkeeping } from './delivery-bookkeeping';
import { createDeliveryActivities } from './deliveries';
import type { ActivityDependencies } from './dependencies';
import { createNoticeActivities } from './notices';
import { createRecoveryActivities } from './recoveries';
import { createReencryptionActivities } from './reencryption';
import { createRegistrationActivities } from './registration';
import { createRetentionActivities } from './retention';
import { createWebhookStateActivities } from './webhook-state';

export type { ActivityDependencies } from './dependencies';

/** Every activity the workflows schedule, by the names and signatures of the contract (src/contract/activities.ts). */
export function createActivities(dependencies: ActivityDependencies): ActivityTypes {
  const bookkeeping = createDeliveryBookkeeping(dependencies.sql, dependencies.client);
  return {
    ...createRegistrationActivities(dependencies),
    ...createDeliveryActivities(dependencies, bookkeeping),
    ...createRecoveryActivities(dependencies, bookkeeping),
    ...createWebhookStateActivities(dependencies),
    ...createRetentionActivities(dependencies),
    ...createNoticeActivities(dependencies),
    ...createReencryptionActivities(dependencies),
  };
}
