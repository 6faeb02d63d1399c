import { proxyActivities } from '@temporalio/workflow';
import type { ActivityTypes } from '../src/contract/activities';
import type { NoticeMailOutcome, NoticeMailRequest } from '../src/contract/payloads';

// A notice is not a delivery: its mail is tried again while the SMTP server is down, for up
// to a day, backing off to one attempt every 10 minutes.
const { sendNoticeMail } = proxyActivities<ActivityTypes>({
  startToCloseTimeout: '2 minutes',
  scheduleToCloseTimeout: '24 hours',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

/**
 * `notice/{noticeId}`: mails one notice to its account's notificationEmail, within the
 * account's hourly cap. Started by the store of `webhook/{id}`'s state that made the notice.
 * Its input and result hold ids and an outcome only: the address is read when the mail goes.
 */
export async function mailNotice({ noticeId }: NoticeMailRequest): Promise<NoticeMailOutcome> {
  return sendNoticeMail(noticeId);
}
