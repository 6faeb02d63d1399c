// A webhook's delivery log, newest first: filters, paging, an entry's request and response,
// and redelivery of an entry; for a token that may read it, and redeliver.
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { deliveryLogFilters, isRedeliverable } from '../../objects';
import type { Api, DeliveryLogEntry, DeliveryLogFilters } from './api';
import { DeliveryDetailPanel } from './delivery-detail';
import { ErrorText, Loading, Status, describeResult, Time } from './feedback';
import { FilterSelect } from './filter-select';
import { LabelledCell, RecordTable } from './labelled-cell';
import { PageButtons, usePages } from './paging';
import { NotAllowed, useLacking } from './scopes';
import { TraceId } from './trace-id';
import { useAction } from './use-action';
import { useLoad } from './use-load';

// The options are the values the API accepts for each filter.
const { properties } = deliveryLogFilters;
const FILTERS: { name: keyof DeliveryLogFilters; label: string; options: readonly string[] }[] = [
  { name: 'outcome', label: 'Outcome', options: properties.outcome.enum },
  { name: 'kind', label: 'Kind', options: properties.kind.enum },
  { name: 'event', label: 'Event', options: properties.event.enum },
];

interface Props {
  api: Api;
  webhookId: string;
  version: number;
  onLogged: () => void;
}

export function DeliveryLog(props: Props) {
  const cannotRead = useLacking('GET /v3/webhooks/{id}/deliveries', 'GET /v3/webhooks/{id}/deliveries/{deliveryId}');
  return cannotRead ? <NotAllowed scope={cannotRead} what="read the delivery log" /> : <Log {...props} />;
}

function Log({ api, webhookId, version, onLogged }: Props) {
  const cannotRedeliver = useLacking('POST /v3/webhooks/{id}/deliveries/{deliveryId}/redeliveries');
  const [filters, setFilters] = useState<DeliveryLogFilters>({});
  const pages = usePages();
  const { before } = pages;
  // The entry whose request and response are shown, under its row.
  const [selected, setSelected] = useState<string | null>(null);
  const log = useLoad(() => api.listDeliveries(webhookId, filters, before), [api, webhookId, filters, before, version]);
  const redeliver = useAction(
    (deliveryId: string) => api.redeliver(webhookId, deliveryId),
    () => {
      pages.reset();
      onLogged();
    },
  );

  const filter = (name: keyof DeliveryLogFilters, value: string) => {
    setFilters({ ...filters, [name]: value || undefined });
    pages.reset();
  };
  return (
    <section class="log" aria-labelledby="log-heading">
      <h2 id="log-heading">Delivery log</h2>
      <div class="filters">
        {FILTERS.map(({ name, label, options }) => (
          <FilterSelect
            key={name}
            id={`filter-${name}`}
            label={label}
            value={filters[name]}
            options={options}
            onChange={(value) => filter(name, value)}
          />
        ))}
      </div>
      <button type="button" class="secondary" onClick={log.reload} disabled={log.loading}>
        Refresh
      </button>
      {redeliver.result && (
        <Status>
          Redelivered as {redeliver.result.deliveryId}: {describeResult(redeliver.result)}
        </Status>
      )}
      <ErrorText error={redeliver.error} />
      {cannotRedeliver && <NotAllowed scope={cannotRedeliver} what="redeliver an entry" />}
      {log.loading && <Loading what="the delivery log" />}
      <ErrorText error={log.error} />
      {log.data?.data.length === 0 && (
        <p class="empty">{Object.values(filters).some(Boolean) ? 'No delivery matches these filters.' : 'Nothing delivered yet.'}</p>
      )}
      {log.data && log.data.data.length > 0 && (
        <RecordTable class="deliveries" caption="Deliveries, newest first" columns={COLUMNS} hiddenName="Actions">
          {log.data.data.map((entry) => (
            <Fragment key={entry.id}>
              <Entry
                entry={entry}
                busy={redeliver.busy}
                onRedeliver={cannotRedeliver ? null : () => redeliver.run(entry.id)}
                expanded={selected === entry.id}
                onToggle={() => setSelected(selected === entry.id ? null : entry.id)}
              />
              {selected === entry.id && (
                <tr class="detail-row" id={`detail-${entry.id}`}>
                  <td colSpan={COLUMNS.length}>
                    <DeliveryDetailPanel api={api} webhookId={webhookId} deliveryId={entry.id} />
                  </td>
                </tr>
              )}
            </Fragment>
          ))}
        </RecordTable>
      )}
      <PageButtons pages={pages} next={log.data?.next} />
    </section>
  );
}

const COLUMNS = ['Attempted', 'Kind', 'Event', 'List and cursor', 'Outcome', 'Status code', 'Error', 'Duration', 'Trace', ''];

interface EntryProps {
  entry: DeliveryLogEntry;
  busy: boolean;
  /** Null for a token that may not redeliver. */
  onRedeliver: (() => void) | null;
  /** Whether its request and response are shown. */
  expanded: boolean;
  onToggle: () => void;
}

function Entry({ entry, busy, onRedeliver, expanded, onToggle }: EntryProps) {
  return (
    <tr class={entry.outcome}>
      <LabelledCell label="Attempted">
        <Time iso={entry.attemptedAt} />
      </LabelledCell>
      <LabelledCell label="Kind">
        {entry.kind}
        {entry.redeliveryOf && <span class="mono small"> of {entry.redeliveryOf}</span>}
      </LabelledCell>
      <LabelledCell label="Event">{entry.event}</LabelledCell>
      <LabelledCell label="List and cursor">
        {entry.listId === null ? '—' : <span class="mono">{`${entry.listId} #${entry.cursor}`}</span>}
      </LabelledCell>
      <LabelledCell label="Outcome">{entry.outcome}</LabelledCell>
      <LabelledCell label="Status code">{entry.statusCode ?? '—'}</LabelledCell>
      <LabelledCell label="Error">{entry.error ?? '—'}</LabelledCell>
      <LabelledCell label="Duration">{entry.durationMs} ms</LabelledCell>
      <LabelledCell label="Trace" class="trace">
        <TraceId traceId={entry.traceId} short />
      </LabelledCell>
      <LabelledCell label="Actions" class="buttons">
        <button
          type="button"
          class="secondary"
          onClick={onToggle}
          aria-expanded={expanded}
          aria-controls={expanded ? `detail-${entry.id}` : undefined}
          aria-label={`Details of ${entry.event} ${entry.id}`}
        >
          Details
        </button>
        {onRedeliver && isRedeliverable(entry.kind) && (
          <button type="button" disabled={busy} onClick={onRedeliver} aria-label={`Redeliver ${entry.event} ${entry.id}`}>
            Redeliver
          </button>
        )}
      </LabelledCell>
    </tr>
  );
}
