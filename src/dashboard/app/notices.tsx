// Notices: what the service told the owner of a failing or paused webhook. On a webhook's page,
// the warning with its latest notice; on the Notices page, the account's notices and where
// they are mailed.
import { useState } from 'preact/hooks';
import { ActionForm } from './action-form';
import type { Api, Notice, Webhook } from './api';
import { ErrorText, Loading, Status, Time } from './feedback';
import { PageHeading } from './heading';
import { LabelledCell, RecordTable } from './labelled-cell';
import { PageButtons, usePages } from './paging';
import { NotAllowed, useLacking } from './scopes';
import { SoleField } from './text-field';
import { useAction } from './use-action';
import { useLoad } from './use-load';
import type { View } from './view';

/** Failures in a row from which a webhook is failing (webhook.failing); at 20 it is paused. */
const FAILING_AT = 10;

const NOTICE_TYPES: Record<Notice['type'], string> = {
  'webhook.failing': 'Failing',
  'webhook.paused': 'Paused',
  'webhook.reachable': 'Answers again',
};

const NOTICE_ROW_CLASSES: Record<Notice['type'], string> = {
  'webhook.failing': 'failing',
  'webhook.paused': 'paused',
  'webhook.reachable': 'reachable',
};

/** "non_2xx (HTTP 503)", from a notice's last error. */
function lastErrorOf(notice: Notice): string {
  if (notice.lastError === null) return '—';
  return notice.lastStatusCode === null ? notice.lastError : `${notice.lastError} (HTTP ${notice.lastStatusCode})`;
}

function Mailed({ notice }: { notice: Notice }) {
  if (notice.emailedAt === null) return <>Not mailed</>;
  return (
    <>
      Mailed <Time iso={notice.emailedAt} />
    </>
  );
}

/** On a webhook's page: says that it is failing or paused by failures, with its latest notice. */
export function WebhookNotice({ api, webhook }: { api: Api; webhook: Webhook }) {
  const pausedByFailures = webhook.status === 'paused' && webhook.pausedReason === 'auto_failures';
  const failing = webhook.status === 'active' && webhook.consecutiveFailures >= FAILING_AT;
  const shown = pausedByFailures || failing;
  // A token that may not read notices gets the warning without its latest notice.
  const readsNotices = !useLacking('GET /v3/account/notices');
  const latest = useLoad(
    async () => (shown && readsNotices ? (await api.listNotices({ webhookId: webhook.id, limit: 1 })).data[0] : undefined),
    [api, webhook.id, webhook.status, shown],
  );
  if (!shown) return null;
  const notice = latest.data;
  const answersAgain = pausedByFailures && notice?.type === 'webhook.reachable';
  return (
    <section class={answersAgain ? 'callout reachable' : 'callout'} aria-labelledby="notice-heading">
      <h2 id="notice-heading">
        {answersAgain
          ? `Paused after ${webhook.consecutiveFailures} failed deliveries in a row; the receiver answers again`
          : pausedByFailures
            ? `Paused after ${webhook.consecutiveFailures} failed deliveries in a row`
            : `Failing: ${webhook.consecutiveFailures} deliveries in a row failed`}
      </h2>
      <p>
        {answersAgain
          ? 'A probe was answered with a 2xx. Nothing is delivered until you reactivate it; then recover what it missed.'
          : pausedByFailures
            ? 'Nothing is delivered to it until you reactivate it. The service probes it with a ping now and then (logged as probe) and tells you when it answers. Fix the receiver, then reactivate.'
            : 'At 20 failures in a row it is paused. Fix the receiver: one delivery answered 2xx resets the count.'}
      </p>
      <ErrorText error={latest.error} />
      {notice && (
        <p>
          Notice <span class="mono">{notice.id}</span>, <Time iso={notice.createdAt} />: last error {lastErrorOf(notice)}.{' '}
          <Mailed notice={notice} />.
        </p>
      )}
    </section>
  );
}

/** The Notices page: where notices are mailed, and the account's notices, newest first. */
export function NoticesPage({ api, navigate }: { api: Api; navigate: (view: View) => void }) {
  return (
    <section>
      <PageHeading>Notices</PageHeading>
      <p>
        The service tells you when a webhook fails {FAILING_AT} deliveries in a row, when failures pause it (at 20), and when a webhook so
        paused answers one of its probes again: here, and by mail to the notification email.
      </p>
      <NotificationEmail api={api} />
      <NoticeList api={api} navigate={navigate} />
    </section>
  );
}

/** Where notices go, in words. */
const mailedTo = (email: string | null) => (email ? `Notices are mailed to ${email}.` : 'Notices are not mailed.');

function NotificationEmail({ api }: { api: Api }) {
  const cannotChange = useLacking('PATCH /v3/account');
  const account = useLoad(() => api.getAccount(), [api]);
  const [value, setValue] = useState<string | null>(null);
  const shown = value ?? account.data?.notificationEmail ?? '';
  const save = useAction(
    (notificationEmail: string | null) => api.setNotificationEmail(notificationEmail),
    (saved) => {
      account.set(saved);
      setValue(null);
    },
  );
  if (cannotChange) {
    return (
      <section class="subscription" aria-labelledby="notification-email-heading">
        <h2 id="notification-email-heading">Notification email</h2>
        {account.loading && !account.data && <Loading what="the account" />}
        <ErrorText error={account.error} />
        {account.data && <p>{mailedTo(account.data.notificationEmail)}</p>}
        <NotAllowed scope={cannotChange} what="change where notices are mailed" />
      </section>
    );
  }
  return (
    <ActionForm class="subscription" onSubmit={() => save.run(shown.trim() || null)}>
      <h2>Notification email</h2>
      {account.loading && !account.data && <Loading what="the account" />}
      <ErrorText error={account.error} />
      <SoleField
        id="notification-email"
        name="notificationEmail"
        label="Mail notices to"
        hint="One address. Empty: notices are shown here only."
        inputMode="email"
        value={shown}
        onValue={setValue}
        actionError={save.error}
      />
      <button type="submit" disabled={save.busy || !account.data}>
        Save the email
      </button>
      {save.result && !save.busy && <Status>{mailedTo(save.result.notificationEmail)}</Status>}
    </ActionForm>
  );
}

function NoticeList({ api, navigate }: { api: Api; navigate: (view: View) => void }) {
  const pages = usePages();
  const { before } = pages;
  const notices = useLoad(() => api.listNotices({ before }), [api, before]);
  return (
    <section class="log" aria-labelledby="notices-heading">
      <h2 id="notices-heading">Your notices</h2>
      <button type="button" class="secondary" onClick={notices.reload} disabled={notices.loading}>
        Refresh
      </button>
      {notices.loading && <Loading what="your notices" />}
      <ErrorText error={notices.error} />
      {notices.data?.data.length === 0 && <p class="empty">No notices: none of your webhooks has failed 10 deliveries in a row.</p>}
      {notices.data && notices.data.data.length > 0 && (
        <RecordTable
          class="notices"
          caption="Notices, newest first"
          columns={['Noticed', 'Notice', 'Webhook', 'Failures in a row', 'Last error', 'Mail']}
        >
          {notices.data.data.map((notice) => (
            <tr key={notice.id} class={NOTICE_ROW_CLASSES[notice.type]}>
              <LabelledCell label="Noticed">
                <Time iso={notice.createdAt} />
              </LabelledCell>
              <LabelledCell label="Notice">{NOTICE_TYPES[notice.type]}</LabelledCell>
              <LabelledCell label="Webhook">
                <button type="button" class="link url" onClick={() => navigate({ name: 'webhook', id: notice.webhookId })}>
                  {notice.url}
                </button>
              </LabelledCell>
              <LabelledCell label="Failures in a row">{notice.consecutiveFailures}</LabelledCell>
              <LabelledCell label="Last error">{lastErrorOf(notice)}</LabelledCell>
              <LabelledCell label="Mail">
                <Mailed notice={notice} />
              </LabelledCell>
            </tr>
          ))}
        </RecordTable>
      )}
      <p class="hint">
        Not mailed: no notification email was set, the service mails no notices (no SMTP server configured), more than the hourly limit of
        mails came at once, or the mail is still being tried.
      </p>
      <PageButtons pages={pages} next={notices.data?.next} />
    </section>
  );
}
