// `notice/{noticeId}` on the real workflow code with activities the test passes: its mail is
// tried again until it goes (a notice is not a delivery), and a refusal for good ends it.
import { randomBytes } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailNotice } from '../../workflows';
import { startWorkflowWorker, type WorkflowWorker } from './support/worker';

/** Attempts per notice id; a notice fails as many attempts as its id asks (`ntc_fail<n>_…`), or for good (`ntc_refused_…`). */
const attempts = new Map<string, number>();
let worker: WorkflowWorker;
beforeAll(async () => {
  worker = await startWorkflowWorker({
    async sendNoticeMail(noticeId) {
      const attempt = (attempts.get(noticeId) ?? 0) + 1;
      attempts.set(noticeId, attempt);
      if (noticeId.startsWith('ntc_refused')) throw ApplicationFailure.nonRetryable('refused for good: EENVELOPE 550', 'NoticeMailFailed');
      const failures = Number(/^ntc_fail(\d+)_/.exec(noticeId)?.[1] ?? 0);
      if (attempt <= failures) throw ApplicationFailure.retryable('SMTP down: ESOCKET', 'NoticeMailFailed');
      return 'sent';
    },
  });
});
afterAll(() => worker?.stop());

const run = (noticeId: string) =>
  worker.client.workflow.execute(mailNotice, {
    taskQueue: worker.taskQueue,
    workflowId: `notice/${noticeId}`,
    args: [{ noticeId }],
  });

describe('mailNotice', () => {
  it('returns what its activity settled', async () => {
    const noticeId = `ntc_ok_${randomBytes(4).toString('hex')}`;
    expect(await run(noticeId)).toBe('sent');
    expect(attempts.get(noticeId)).toBe(1);
  });

  it('tries the mail again while it fails, backing off, until it goes', async () => {
    const noticeId = `ntc_fail2_${randomBytes(4).toString('hex')}`;
    expect(await run(noticeId)).toBe('sent');
    expect(attempts.get(noticeId)).toBe(3);
  });

  it('ends failed after one attempt when the server refuses the mail for good', async () => {
    const noticeId = `ntc_refused_${randomBytes(4).toString('hex')}`;
    await expect(run(noticeId)).rejects.toBeInstanceOf(WorkflowFailedError);
    expect(attempts.get(noticeId)).toBe(1);
  });
});
