// Reactivating a paused webhook: a ping first, its answer shown, and then the owner confirms.
// An owner who reactivates a receiver that still fails gets 20 more failures and a second
// pause; the ping shows that before anything is delivered, and costs nothing (never counted).
import { useState } from 'preact/hooks';
import type { Api, DeliveryResult, Webhook } from './api';
import { ErrorText, describeResult } from './feedback';
import { useAction } from './use-action';
import { useFocusOnArrival } from './use-focus';
import { MAX_CONSECUTIVE_FAILURES } from '../../contract/rules';

interface Props {
  api: Api;
  webhook: Webhook;
  /** The ping was logged: the log shows it. */
  onLogged: () => void;
  onReactivated: (webhook: Webhook) => void;
  /** Paused by the button this one replaces, which had the focus. */
  pausedHere: boolean;
}

export function Reactivation({ api, webhook, onLogged, onReactivated, pausedHere }: Props) {
  const ping = useAction(() => api.ping(webhook.id), onLogged);
  const reactivate = useAction(() => api.updateWebhook(webhook.id, { status: 'active' }), onReactivated);
  const [cancelled, setCancelled] = useState(false);
  const cancel = () => {
    ping.reset();
    reactivate.reset();
    setCancelled(true);
  };
  return (
    <div class="action">
      <h2>Deliveries</h2>
      <p>
        Nothing is delivered while paused. Reactivating sends a ping first and shows its answer; once you confirm, the failure count is 0.
      </p>
      {ping.result ? (
        <ConfirmReactivation answer={ping.result} busy={reactivate.busy} onConfirm={() => reactivate.run()} onCancel={cancel} />
      ) : (
        <StartReactivation busy={ping.busy} focused={pausedHere || cancelled} onStart={() => ping.run()} />
      )}
      <ErrorText error={ping.error ?? reactivate.error} />
    </div>
  );
}

/** `focused`: it takes the place of a button that had the focus (Pause deliveries, or Cancel). */
function StartReactivation({ busy, focused, onStart }: { busy: boolean; focused: boolean; onStart: () => void }) {
  const button = useFocusOnArrival<HTMLButtonElement>(focused);
  return (
    <button type="button" ref={button} disabled={busy} onClick={onStart}>
      {busy ? 'Pinging…' : 'Reactivate'}
    </button>
  );
}

interface ConfirmProps {
  answer: DeliveryResult;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}

/**
 * What the ping came to, and the question. The answer takes the focus, not the confirm
 * button: a screen reader reads it first, and a second Enter does not reactivate unread.
 */
function ConfirmReactivation({ answer, busy, onConfirm, onCancel }: ConfirmProps) {
  const said = useFocusOnArrival<HTMLParagraphElement>();
  return (
    <div class="confirm" role="group" aria-labelledby="reactivate-question">
      <p id="reactivate-answer" ref={said} tabIndex={-1} class={answer.delivered ? 'status' : 'warning'}>
        Ping: {describeResult(answer)}
      </p>
      <p id="reactivate-question">
        {answer.delivered
          ? 'The receiver answered with a 2xx. Reactivate? Deliveries resume with the next change, the failure count at 0.'
          : `The receiver did not answer with a 2xx. Reactivate anyway? If deliveries keep failing, the webhook is paused again after ${MAX_CONSECUTIVE_FAILURES} failures in a row.`}
      </p>
      <p class="hint">The ping is the newest entry of the delivery log below: its Details show what the receiver answered.</p>
      <div class="row">
        <button type="button" disabled={busy} onClick={onConfirm}>
          Reactivate
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}

/** Said in place of the confirm button once it has gone, with the focus it had. */
export function Reactivated() {
  const line = useFocusOnArrival<HTMLParagraphElement>();
  return (
    <p class="status" role="status" ref={line} tabIndex={-1}>
      Reactivated: the failure count is 0, and the next change is delivered.
    </p>
  );
}
