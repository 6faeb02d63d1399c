// The audit log: who changed what in the account, newest first, one action or all, page by
// page. Everything in an entry is the API's text, shown as text.
import { useState } from 'preact/hooks';
import { AUDIT_ACTIONS } from '../../objects';
import type { Api, AuditAction, AuditEntry } from './api';
import { ErrorText, Loading, Time } from './feedback';
import { FilterSelect } from './filter-select';
import { PageHeading } from './heading';
import { LabelledCell, RecordTable } from './labelled-cell';
import { PageButtons, usePages } from './paging';
import { useLoad } from './use-load';
import type { View } from './view';

const COLUMNS = ['When', 'Action', 'Target', 'By', 'Details'];

export function AuditLogPage({ api, navigate }: { api: Api; navigate: (view: View) => void }) {
  const [action, setAction] = useState<AuditAction | null>(null);
  const pages = usePages();
  const { before } = pages;
  const log = useLoad(() => api.listAuditLog({ action, before }), [api, action, before]);
  return (
    <section>
      <PageHeading>Audit log</PageHeading>
      <p class="hint">
        Every change made with this account's tokens, through the API, this dashboard or the command line, with the token that made it and
        the address it came from; the service's own changes (a pause after 20 failures, a relay session closed for good) name no token.
        Entries are kept as long as the service keeps its records, 30 days unless its operator says otherwise.
      </p>
      <section class="log" aria-labelledby="audit-heading">
        <h2 id="audit-heading">Changes</h2>
        <div class="filters">
          <FilterSelect
            id="audit-action"
            label="Action"
            value={action}
            options={AUDIT_ACTIONS}
            onChange={(value) => {
              setAction((value || null) as AuditAction | null);
              pages.reset();
            }}
          />
        </div>
        <button type="button" class="secondary" onClick={log.reload} disabled={log.loading}>
          Refresh
        </button>
        {log.loading && <Loading what="the audit log" />}
        <ErrorText error={log.error} />
        {log.data?.data.length === 0 && <p class="empty">{action ? `No ${action} in the log.` : 'Nothing changed yet.'}</p>}
        {log.data && log.data.data.length > 0 && (
          <RecordTable class="audit" caption="Changes, newest first" columns={COLUMNS}>
            {log.data.data.map((entry) => (
              <Entry key={entry.id} entry={entry} navigate={navigate} />
            ))}
          </RecordTable>
        )}
        <PageButtons pages={pages} next={log.data?.next} />
      </section>
    </section>
  );
}

function Entry({ entry, navigate }: { entry: AuditEntry; navigate: (view: View) => void }) {
  const { target, actor } = entry;
  return (
    <tr>
      <LabelledCell label="When">
        <Time iso={entry.at} />
      </LabelledCell>
      <LabelledCell label="Action">
        <span class="mono nowrap">{entry.action}</span>
      </LabelledCell>
      <LabelledCell label="Target" class="wraps">
        {target.type}{' '}
        {target.type === 'webhook' ? (
          <button type="button" class="link mono" onClick={() => navigate({ name: 'webhook', id: target.id })}>
            {target.id}
          </button>
        ) : (
          <span class="mono">{target.id}</span>
        )}
      </LabelledCell>
      <LabelledCell label="By" class="wraps">
        {actor === null ? (
          'the service'
        ) : (
          <>
            the token <strong>{actor.tokenName}</strong> <span class="mono small">{actor.tokenId}</span> from{' '}
            <span class="mono">{actor.clientAddress}</span>
          </>
        )}
      </LabelledCell>
      <LabelledCell label="Details" class="wraps">
        <Details details={entry.details} />
      </LabelledCell>
    </tr>
  );
}

/** Each field of an entry's details on a line of its own, "name: value". */
function Details({ details }: { details: AuditEntry['details'] }) {
  const fields = Object.entries(details);
  if (fields.length === 0) return <>—</>;
  return (
    <ul class="details">
      {fields.map(([name, value]) => (
        <li key={name}>
          {name}: <span class="mono">{valueText(value)}</span>
        </li>
      ))}
    </ul>
  );
}

/** A detail's value as text: lists comma-separated ([] when empty), an object's fields in braces. */
function valueText(value: unknown): string {
  if (Array.isArray(value)) return value.length === 0 ? '[]' : value.map(valueText).join(', ');
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([name, inner]) => `${name}: ${valueText(inner)}`)
      .join(', ')}}`;
  }
  return String(value);
}
