// "Recover missed deliveries": one action that sends again every event delivery of a window
// that failed or was skipped, as a background task whose progress the page follows.
import { useEffect, useState } from 'preact/hooks';
import { ActionForm } from './action-form';
import type { Api, Recovery } from './api';
import { ErrorText, Status, Time } from './feedback';
import { NotAllowed, useLacking } from './scopes';
import { SoleField } from './text-field';
import { useAction } from './use-action';
import { useLoad } from './use-load';

/** How often a running recovery is read again. */
const POLL_MS = 1000;
/** The log pages read, newest first, looking for the start of the failure streak (the log keeps about 1,000). */
const STREAK_PAGES = 10;
/** Without a failure streak, the window starts this long ago. */
const NO_STREAK_WINDOW_MS = 24 * 60 * 60 * 1000;

interface Props {
  api: Api;
  webhookId: string;
  /** The recovery logged redeliveries: the log shows them. */
  onLogged: () => void;
}

/** The section, for a token that may read the webhook's recoveries and log; what it may not do said in words. */
export function RecoverMissed(props: Props) {
  const cannotRead = useLacking('GET /v3/webhooks/{id}/recoveries', 'GET /v3/webhooks/{id}/deliveries');
  return cannotRead ? (
    <NotAllowed scope={cannotRead} what="see or recover the deliveries this webhook missed" />
  ) : (
    <Recovering {...props} />
  );
}

function Recovering({ api, webhookId, onLogged }: Props) {
  const cannotStart = useLacking('POST /v3/webhooks/{id}/recoveries', 'DELETE /v3/webhooks/{id}/recoveries/{recoveryId}');
  const latest = useLoad(async () => (await api.listRecoveries(webhookId))[0] ?? null, [api, webhookId]);
  // The since time is the form's, which a token that may not start a recovery is not shown.
  const streak = useLoad(async () => (cannotStart ? null : failureStreakStart(api, webhookId)), [api, webhookId]);
  // Null until the owner types: the start of the streak, as it loads.
  const [typed, setTyped] = useState<string | null>(null);
  const since = typed ?? streak.data ?? (streak.loading ? '' : new Date(Date.now() - NO_STREAK_WINDOW_MS).toISOString());
  const start = useAction(() => api.startRecovery(webhookId, since.trim()), latest.set);
  const cancel = useAction(
    (recoveryId: string) => api.cancelRecovery(webhookId, recoveryId),
    (recovery) => {
      latest.set(recovery);
      onLogged();
    },
  );

  const running = latest.data?.status === 'running' ? latest.data : null;
  useEffect(() => {
    if (!running) return;
    const timer = setTimeout(() => {
      api.getRecovery(webhookId, running.id).then(
        (recovery) => {
          latest.set(recovery);
          if (recovery.status !== 'running') onLogged();
        },
        () => latest.reload(),
      );
    }, POLL_MS);
    return () => clearTimeout(timer);
  }, [running]);

  return (
    <section class="action recovery" aria-labelledby="recovery-heading">
      <h2 id="recovery-heading">Recover missed deliveries</h2>
      <p>
        Sends again, oldest first and a few a second, every event delivery since this time that failed or was skipped while paused, unless
        it was redelivered since. Each is a redelivery: the same body, one attempt, never counted as a failure.
      </p>
      {latest.data && <Progress recovery={latest.data} />}
      {cannotStart ? (
        <NotAllowed scope={cannotStart} what="start or cancel a recovery" />
      ) : running ? (
        <button type="button" class="secondary" disabled={cancel.busy} onClick={() => cancel.run(running.id)}>
          Cancel the recovery
        </button>
      ) : (
        <ActionForm onSubmit={() => start.run()}>
          <SoleField
            id="recovery-since"
            name="since"
            label="Since (UTC)"
            hint={
              streak.data
                ? 'The start of the current failure streak: the oldest delivery that failed after the last one delivered.'
                : 'No failure streak in the log: the last 24 hours. Any ISO 8601 time in the past.'
            }
            class="mono"
            value={since}
            onValue={setTyped}
            actionError={start.error}
          />
          <button type="submit" disabled={start.busy || since === ''}>
            Recover missed deliveries
          </button>
        </ActionForm>
      )}
      <ErrorText error={cancel.error ?? latest.error} />
    </section>
  );
}

const ENDINGS: Record<Recovery['status'], string> = {
  running: 'Running',
  completed: 'Completed',
  stopped: 'Stopped',
  cancelled: 'Cancelled',
};

const STOPPED_BECAUSE: Record<NonNullable<Recovery['stoppedReason']>, string> = {
  receiver_failing: 'the receiver failed 5 sends in a row',
  webhook_paused: 'the webhook was paused',
  webhook_deleted: 'the webhook was deleted',
};

/** The latest recovery: how far it got, in words and as a bar. */
function Progress({ recovery }: { recovery: Recovery }) {
  const why = recovery.stoppedReason ? ` (${STOPPED_BECAUSE[recovery.stoppedReason]})` : '';
  return (
    <div class="progress">
      <Status>
        {ENDINGS[recovery.status]}
        {why}: {recovery.sent} of {recovery.total} sent, {recovery.delivered} delivered, {recovery.failed} failed.
      </Status>
      <progress max={Math.max(recovery.total, 1)} value={recovery.total === 0 ? 1 : recovery.sent} aria-label="Recovery progress" />
      <p class="hint">
        Since <Time iso={recovery.since} />, until <Time iso={recovery.until} />
        {recovery.finishedAt && (
          <>
            ; ended <Time iso={recovery.finishedAt} />
          </>
        )}
        .
      </p>
    </div>
  );
}

/**
 * When the current failure streak began: the oldest event delivery logged after the newest
 * delivered one (a failure, or one skipped while paused). Null when the newest was delivered.
 */
async function failureStreakStart(api: Api, webhookId: string): Promise<string | null> {
  let start: string | null = null;
  let before: string | null = null;
  for (let page = 0; page < STREAK_PAGES; page++) {
    const { data, next } = await api.listDeliveries(webhookId, { kind: 'event' }, before, 100);
    for (const entry of data) {
      if (entry.outcome === 'delivered') return start;
      start = entry.attemptedAt;
    }
    if (!next) break;
    before = next;
  }
  return start;
}
