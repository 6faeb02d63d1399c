// The mail a notice becomes: plain text, from what the notice holds and nothing else. Never
// a secret, never what the receiver answered (only the error class and the status code).
import { MAX_CONSECUTIVE_FAILURES } from '../contract/rules';
import type { Notice } from '../objects';

export interface NoticeMail {
  subject: string;
  text: string;
}

const REACTIVATE = 'Reactivate the webhook (Reactivate in the dashboard, or PATCH /v3/webhooks/{id} with {"status": "active"}).';
const RECOVER =
  'Recover what it missed: "Recover missed deliveries" in the dashboard (POST /v3/webhooks/{id}/recoveries) ' +
  'sends again every failed or skipped delivery since the failures began.';

/** What each type of notice says happened, and what to do about it. */
const WORDING: Record<Notice['type'], { subject: string; what: (notice: Notice) => string; steps: string[] }> = {
  'webhook.failing': {
    subject: 'Webhook failing',
    what: (notice) =>
      `Your webhook ${notice.url} has failed ${notice.consecutiveFailures} deliveries in a row. ` +
      `At ${MAX_CONSECUTIVE_FAILURES} in a row it is paused; one delivery answered 2xx resets the count.`,
    steps: [
      'Fix the receiver: it must answer 2xx within the delivery time-out.',
      'Check it with a test ping from the dashboard (POST /v3/webhooks/{id}/pings).',
      'Once it answers again, recover the deliveries that failed: "Recover missed deliveries" in the dashboard ' +
        '(POST /v3/webhooks/{id}/recoveries).',
    ],
  },
  'webhook.paused': {
    subject: 'Webhook paused',
    what: (notice) =>
      `Your webhook ${notice.url} was paused after ${notice.consecutiveFailures} deliveries in a row failed. ` +
      'Nothing is delivered to it until you reactivate it; the events it misses meanwhile are logged as skipped. ' +
      'The service probes it now and then with a ping, and tells you when it answers again.',
    steps: ['Fix the receiver: it must answer 2xx within the delivery time-out.', REACTIVATE, RECOVER],
  },
  'webhook.reachable': {
    subject: 'Webhook answers again',
    what: (notice) =>
      `Your webhook ${notice.url}, paused after ${notice.consecutiveFailures} deliveries in a row failed, ` +
      `answered a probe with a 2xx at ${notice.createdAt}. It is still paused: nothing is delivered to it until you reactivate it.`,
    steps: [REACTIVATE, RECOVER],
  },
};

export function composeNoticeMail(notice: Notice, dashboardUrl: string): NoticeMail {
  const { subject, what, steps } = WORDING[notice.type];
  const lines = [
    what(notice),
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
  return { subject: `${subject}: ${notice.url}`, text: `${lines.join('\n')}\n` };
}

function describeError(notice: Notice): string {
  if (notice.lastError === null) return 'none logged';
  return notice.lastStatusCode === null ? `${notice.lastError} (no HTTP response)` : `${notice.lastError} (HTTP ${notice.lastStatusCode})`;
}
