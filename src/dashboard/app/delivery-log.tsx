// A webhook's delivery log, newest first: filters, paging, and redelivery of an entry.
import { useState } from 'preact/hooks';
import { TOPICS } from '../../topics';
import type { Api, DeliveryLogEntry, LogFilters } from './api';
import { ErrorText, Loading, Status, describeResult, formatTime } from './feedback';
import { PageButtons, usePages } from './paging';
import { useAction } from './use-action';
import { useLoad } from './use-load';

const FILTERS: { name: keyof LogFilters; label: string; options: string[] }[] = [
  { name: 'outcome', label: 'Outcome', options: ['delivered', 'failed'] },
  { name: 'kind', label: 'Kind', options: ['event', 'ping', 'redelivery'] },
  { name: 'event', label: 'Event', options: [...TOPICS, 'ping'] },
];

export function DeliveryLog({ api, webhookId, version, onLogged }: { api: Api; webhookId: string; version: number; onLogged: () => void }) {
  const [filters, setFilters] = useState<LogFilters>({});
  const pages = usePages();
  const { before } = pages;
  const log = useLoad(() => api.listDeliveries(webhookId, filters, before), [api, webhookId, filters, before, version]);
  const redeliver = useAction(
    (deliveryId: string) => api.redeliver(webhookId, deliveryId),
    () => {
      pages.reset();
      onLogged();
    },
  );

  const filter = (name: keyof LogFilters, value: string) => {
    setFilters({ ...filters, [name]: value || undefined });
    pages.reset();
  };
  return (
    <section class="log" aria-labelledby="log-heading">
      <h2 id="log-heading">Delivery log</h2>
      <div class="filters">
        {FILTERS.map(({ name, label, options }) => (
          <div key={name}>
            <label for={`filter-${name}`}>{label}</label>
            <select id={`filter-${name}`} value={filters[name] ?? ''} onChange={(event) => filter(name, event.currentTarget.value)}>
              <option value="">Any</option>
              {options.map((option) => (
                <option key={option} value={option}>
                  {option}
                </option>
              ))}
            </select>
          </div>
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
      {log.loading && <Loading what="the delivery log" />}
      <ErrorText error={log.error} />
      {log.data?.data.length === 0 && (
        <p class="empty">{Object.values(filters).some(Boolean) ? 'No delivery matches these filters.' : 'Nothing delivered yet.'}</p>
      )}
      {log.data && log.data.data.length > 0 && (
        <table class="deliveries">
          <caption class="visually-hidden">Deliveries, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Attempted</th>
              <th scope="col">Kind</th>
              <th scope="col">Event</th>
              <th scope="col">List and cursor</th>
              <th scope="col">Outcome</th>
              <th scope="col">Status code</th>
              <th scope="col">Error</th>
              <th scope="col">Duration</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {log.data.data.map((entry) => (
              <Entry key={entry.id} entry={entry} busy={redeliver.busy} onRedeliver={() => redeliver.run(entry.id)} />
            ))}
          </tbody>
        </table>
      )}
      <PageButtons pages={pages} next={log.data?.next} />
    </section>
  );
}

function Entry({ entry, busy, onRedeliver }: { entry: DeliveryLogEntry; busy: boolean; onRedeliver: () => void }) {
  return (
    <tr class={entry.outcome}>
      <td data-label="Attempted">{formatTime(entry.attemptedAt)}</td>
      <td data-label="Kind">
        {entry.kind}
        {entry.redeliveryOf && <span class="mono small"> of {entry.redeliveryOf}</span>}
      </td>
      <td data-label="Event">{entry.event}</td>
      <td data-label="List and cursor">{entry.listId === null ? '—' : `${entry.listId} #${entry.cursor}`}</td>
      <td data-label="Outcome">{entry.outcome}</td>
      <td data-label="Status code">{entry.statusCode ?? '—'}</td>
      <td data-label="Error">{entry.error ?? '—'}</td>
      <td data-label="Duration">{entry.durationMs} ms</td>
      <td data-label="Actions">
        {entry.kind !== 'ping' && (
          <button type="button" disabled={busy} onClick={onRedeliver} aria-label={`Redeliver ${entry.event} ${entry.id}`}>
            Redeliver
          </button>
        )}
      </td>
    </tr>
  );
}
