// Runs inside the workflow sandbox, bundled by test/workflows/probe-upgrade.test.ts: tells the
// test, through a sink, each local activity and child workflow a workflow schedules past the
// events of the history it replays (a replaying worker counts the whole run as replay, so the
// test's sink is called during replay, and this module tells only what is not).
// A local activity past the history is held there, never answered: a replaying worker has no
// activities, and would fail the workflow task, dropping what the sink heard.
import { proxySinks, workflowInfo, type Sinks, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

export interface ScheduledCommandSinks extends Sinks {
  scheduled: { command(description: string): void };
}

const { scheduled } = proxySinks<ScheduledCommandSinks>();

export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [
    {
      scheduleLocalActivity(input, next) {
        if (!workflowInfo().unsafe.isReplaying) {
          scheduled.command(`local activity ${input.activityType}`);
          return new Promise<never>(() => undefined);
        }
        return next(input);
      },
      startChildWorkflowExecution(input, next) {
        scheduled.command(`child workflow ${input.workflowType}`);
        return next(input);
      },
    },
  ],
});
