// A log entry's trace id: a link to the trace viewer TRACE_URL_TEMPLATE names, or text without one.
import { useContext } from 'preact/hooks';
import { SettingsContext } from './settings';

/**
 * The id, or with `short` its first 8 digits (the whole id its title); a dash when the service
 * traced nothing. The link opens a new tab, which gets no hold on this one and no referrer.
 */
export function TraceId({ traceId, short = false }: { traceId: string | null; short?: boolean }) {
  const { traceUrlTemplate } = useContext(SettingsContext);
  if (traceId === null) return <>—</>;
  const text = short ? traceId.slice(0, 8) : traceId;
  const title = short ? traceId : undefined;
  if (traceUrlTemplate === null) {
    return (
      <span class="mono" title={title}>
        {text}
      </span>
    );
  }
  return (
    <a class="mono" href={traceUrl(traceUrlTemplate, traceId)} target="_blank" rel="noopener noreferrer" title={title}>
      {text}
    </a>
  );
}

function traceUrl(template: string, traceId: string): string {
  return template.replaceAll('{traceId}', encodeURIComponent(traceId));
}
