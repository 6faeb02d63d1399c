// The mail a notice becomes: plain text, from what the notice holds and nothing else. Never
// a secret, never what the receiver answered (only the error class and the status code).
import { MAX_CONSECUTIVE_FAILURES } from '../contract/rules';
import type { Notice } from '../objects';

export interface NoticeMail {
  subject: string;
  text: string;
}

const SUBJECTS: Record<Notice['type'], string> = {
  'webhook.failing': 'Webhook failing',
  'webhook.paused': 'Webhook paused',
};

export function composeNoticeMail(notice: Notice, dashboardUrl: string): NoticeMail {
  const paused = notice.type === 'webhook.paused';
  const what = paused
    ? `Your webhook ${notice.url} was paused after ${notice.consecutiveFailures} deliveries in a row failed. ` +
      'Nothing is delivered to it until you reactivate it; the events it misses meanwhile are logged as skipped.'
    : `Your webhook ${notice.url} has failed ${notice.consecutiveFailures} deliveries in a row. ` +
      `At ${MAX_CONSECUTIVE_FAILURES} in a row it is paused; one delivery answered 2xx resets the count.`;
  const steps = paused
    ? [
        'Fix the receiver: it must answer 2xx within the delivery time-out.',
        'Reactivate the webhook (Reactivate in the dashboard, or PATCH /v3/webhooks/{id} with {"status": "active"}).',
        'Recover what it missed: "Recover missed deliveries" in the dashboard (POST /v3/webhooks/{id}/recoveries) ' +
          'sends again every failed or skipped delivery since the failures began.',
      ]
    : [
        'Fix the receiver: it must answer 2xx within the delivery time-out.',
        'Check it with a test ping from the dashboard (POST /v3/webhooks/{id}/pings).',
        'Once it answers again, recover the deliveries that failed: "Recover missed deliveries" in the dashboard ' +
          '(POST /v3/webhooks/{id}/recoveries).',
      ];
  const lines = [
    what,
    '',
    `Webhook: ${notice.webhookId}`,
    `Last error: ${describeError(notice)}`,
    `Noticed at: ${notice.createdAt}`,
    '',
    'What to do:',
    ...steps.map((step, i) => `${i + 1}. ${step.replaceAll('{id}', notice.webhookId)}`),
    '',
    `Dashboard: ${dashboardUrl}`,
    '',
    `Notice ${notice.id}. You get this because this address is your account's notificationEmail; ` +
      'PATCH /v3/account with {"notificationEmail": null} stops these mails.',
  ];
  return { subject: `${SUBJECTS[notice.type]}: ${notice.url}`, text: `${lines.join('\n')}\n` };
}

function describeError(notice: Notice): string {
  if (notice.lastError === null) return 'none logged';
  return notice.lastStatusCode === null ? `${notice.lastError} (no HTTP response)` : `${notice.lastError} (HTTP ${notice.lastStatusCode})`;
}
