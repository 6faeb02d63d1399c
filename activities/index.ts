// Every side effect of the workflows, by concern. Secrets are read in the activities, from
// PostgreSQL, and never returned: nothing an activity takes or gives may hold one, since
// both travel through Temporal.
import type { ActivityTypes } from '../src/contract/activities';
import { createDeliveryBookkeeping } from './delivery-bookkeeping';
import { createDeliveryActivities } from './deliveries';
import type { ActivityDependencies } from './dependencies';
import { createNoticeActivities } from './notices';
import { createOnDemandActivities } from './on-demand';
import { createProbeActivities } from './probes';
import { createRecoveryActivities } from './recoveries';
import { createReencryptionActivities } from './reencryption';
import { createRegistrationActivities } from './registration';
import { createRetentionActivities } from './retention';
import { createWebhookStateActivities } from './webhook-state';

export type { ActivityDependencies } from './dependencies';

/** Every activity the workflows schedule, by the names and signatures of the contract (src/contract/activities.ts). */
export function createActivities(dependencies: ActivityDependencies): ActivityTypes {
  const bookkeeping = createDeliveryBookkeeping(dependencies);
  return {
    ...createRegistrationActivities(dependencies),
    ...createDeliveryActivities(dependencies, bookkeeping),
    ...createOnDemandActivities(dependencies, bookkeeping),
    ...createProbeActivities(dependencies, bookkeeping),
    ...createRecoveryActivities(dependencies, bookkeeping),
    ...createWebhookStateActivities(dependencies),
    ...createRetentionActivities(dependencies),
    ...createNoticeActivities(dependencies),
    ...createReencryptionActivities(dependencies),
  };
}
