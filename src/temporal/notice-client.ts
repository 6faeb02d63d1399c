// Starting `notice/{noticeId}` from the activity that stores `webhook/{id}`'s state.
import { type Client, WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/client';
import { AccountIdKey, WebhookIdKey } from '../contract/search-attributes';
import { noticeWorkflowId, type WorkflowTypes } from '../contract/workflows';

/** Starts the mail of a notice, once: a repeat finds it started, or done (its id is never reused). */
export async function startNoticeMail(
  client: Client,
  taskQueue: string,
  notice: { noticeId: string; accountId: string; webhookId: string },
): Promise<void> {
  try {
    await client.workflow.start<WorkflowTypes['mailNotice']>('mailNotice', {
      taskQueue,
      workflowId: noticeWorkflowId(notice.noticeId),
      args: [{ noticeId: notice.noticeId }],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: [
        { key: AccountIdKey, value: notice.accountId },
        { key: WebhookIdKey, value: notice.webhookId },
      ],
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}
