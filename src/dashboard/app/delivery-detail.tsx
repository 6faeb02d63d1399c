// One log entry's request and response, as the API keeps them. The receiver's headers and
// body are untrusted: they are only ever text nodes here, never markup.
import type { Api, DeliveryDetail } from './api';
import { ErrorText, Loading } from './feedback';
import { TraceId } from './trace-id';
import { useLoad } from './use-load';

export function DeliveryDetailPanel({ api, webhookId, deliveryId }: { api: Api; webhookId: string; deliveryId: string }) {
  const detail = useLoad(() => api.getDelivery(webhookId, deliveryId), [api, webhookId, deliveryId]);
  if (detail.loading) return <Loading what="the delivery" />;
  if (!detail.data) return <ErrorText error={detail.error} />;
  const entry = detail.data;
  const { request, response } = entry;
  return (
    <div class="delivery-detail">
      <dl class="facts">
        <dt>Trace</dt>
        <dd>
          <TraceId traceId={entry.traceId} />
        </dd>
      </dl>
      <section aria-labelledby={`${deliveryId}-request`}>
        <h3 id={`${deliveryId}-request`}>Request</h3>
        {request ? (
          <>
            <p class="mono">POST {request.url}</p>
            <Headers headers={request.headers} label="Request headers" />
            <Body text={request.body} label="Request body" />
          </>
        ) : (
          <p class="empty">{nothingSent(entry)}</p>
        )}
      </section>
      <section aria-labelledby={`${deliveryId}-response`}>
        <h3 id={`${deliveryId}-response`}>Response</h3>
        {response ? (
          <>
            <p>HTTP {response.statusCode}</p>
            <Headers headers={response.headers} label="Response headers" />
            <Body text={response.body} label="Response body" />
            {response.bodyTruncated && <p class="hint">Only the first 4 KiB of the body is kept.</p>}
          </>
        ) : (
          <p class="empty">{request ? `No response arrived (${entry.error ?? 'error'}).` : 'None.'}</p>
        )}
      </section>
    </div>
  );
}

function nothingSent(entry: DeliveryDetail): string {
  if (entry.outcome === 'skipped') return 'Nothing was sent: the webhook was paused.';
  if (entry.error === 'internal') return 'Nothing is known to have been sent: the attempt was lost on our side.';
  return 'Not kept for this entry.';
}

function Headers({ headers, label }: { headers: Record<string, string>; label: string }) {
  const entries = Object.entries(headers);
  if (entries.length === 0) return <p class="empty">No headers.</p>;
  return (
    <dl class="headers" aria-label={label}>
      {entries.map(([name, value]) => (
        <div key={name}>
          <dt class="mono">{name}</dt>
          <dd class="mono">{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** A body, as the text it is; focusable so that a long one scrolls with the keyboard. */
function Body({ text, label }: { text: string; label: string }) {
  if (text === '') return <p class="empty">Empty body.</p>;
  return (
    <pre class="body" tabIndex={0} aria-label={label}>
      {text}
    </pre>
  );
}
