import {
  ScheduleAlreadyRunning,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleOptions,
  type ScheduleOptionsStartWorkflowAction,
} from '@temporalio/client';
import { retentionScheduleId, type WorkflowTypes } from '../contract/workflows';

/**
 * Creates the schedule that prunes old writes and registrations every hour, or brings an
 * existing one to this configuration: every worker does this at start, so a second worker,
 * a restart or a new RETENTION_DAYS all end in one schedule, visible in the Web UI.
 */
export async function ensureRetentionSchedule(client: Client, taskQueue: string, retentionDays: number): Promise<void> {
  const scheduleId = retentionScheduleId(taskQueue);
  const options = {
    scheduleId,
    spec: { intervals: [{ every: '1 hour' }] },
    action: { type: 'startWorkflow', workflowType: 'pruneRecords', workflowId: scheduleId, taskQueue, args: [{ retentionDays }] },
    policies: { overlap: ScheduleOverlapPolicy.SKIP },
  } satisfies ScheduleOptions<ScheduleOptionsStartWorkflowAction<WorkflowTypes['pruneRecords']>>;
  try {
    await client.schedule.create(options);
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    await client.schedule
      .getHandle(scheduleId)
      .update((current) => ({ ...current, spec: options.spec, action: options.action, policies: options.policies }));
  }
}
