// Workflows schedule activities by the names and signatures in src/contract/activities.ts,
// which their histories record: the worker must register exactly those, each implementing
// its signature (createActivities is typed by the contract, so `npm run typecheck` checks
// the signatures).
import { describe, expect, it } from 'vitest';
import { createActivities, type ActivityDependencies } from '../../activities';
import type { ActivityTypes } from '../../src/contract/activities';

// A compile error if the contract gains or loses an activity type that this list does not.
const contractTypes: Record<keyof ActivityTypes, true> = {
  pingRegistrationUrl: true,
  abandonRegistration: true,
  completeRegistration: true,
  deliverEvent: true,
  recordInternalFailure: true,
  sendPing: true,
  redeliverEvent: true,
  deliverTestEvent: true,
  storeWebhookState: true,
  deleteWebhook: true,
  handPauseToProbes: true,
  probeWebhooks: true,
  awaitRecoveryRecorded: true,
  sendRecoveryItem: true,
  settleLostRecoverySend: true,
  settleRecovery: true,
  pruneRecords: true,
  sendNoticeMail: true,
  resealBatch: true,
};

describe('the activity contract', () => {
  // Nothing is called while the activities are made: dependencies that are never used do.
  const activities = createActivities({ notices: { dashboardUrl: 'http://localhost/' } } as ActivityDependencies);

  it('names exactly the activities the worker registers', () => {
    expect(Object.keys(activities).sort()).toEqual(Object.keys(contractTypes).sort());
  });

  it('is implemented by a function for each name', () => {
    for (const name of Object.keys(contractTypes) as (keyof ActivityTypes)[]) expect(activities[name]).toBeTypeOf('function');
  });
});
