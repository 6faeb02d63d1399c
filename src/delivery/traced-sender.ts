// Every POST to a receiver as a span of the trace under way (the write's, the ping's, the
// redelivery's), and, when receivers get trace context, a `traceparent` naming that span, set
// before the request is built so that the log shows what was sent. The span is ours rather than
// an undici instrumentation's: that one would add `traceparent` whatever TRACE_RECEIVERS says,
// after the log's copy of the request is made, and record the URL's query string.
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { inSpan, traceparentOf } from '../tracing/spans';
import type { HttpSender } from './sender';

/** `url` as a span may show it: no credentials, no query string, no fragment. */
export function urlForSpan(url: string): string {
  if (!URL.canParse(url)) return '';
  const shown = new URL(url);
  shown.username = '';
  shown.password = '';
  shown.search = '';
  shown.hash = '';
  return shown.toString();
}

export function traceSends(http: HttpSender, { traceReceivers }: { traceReceivers: boolean }): HttpSender {
  return {
    close: () => http.close(),
    post(url, body, headers, credentials) {
      const attributes = {
        'http.request.method': 'POST',
        'url.full': urlForSpan(url),
        'webhook.id': headers['svc-webhook'],
        'delivery.id': headers['svc-delivery'],
        event: headers['svc-event'],
      };
      return inSpan(
        'POST',
        attributes,
        async (span) => {
          const traceparent = traceReceivers ? traceparentOf(span) : null;
          const exchange = await http.post(url, body, traceparent === null ? headers : { ...headers, traceparent }, credentials);
          const { result } = exchange;
          span.setAttribute('outcome', result.delivered ? 'delivered' : 'failed');
          if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode);
          if (result.error !== null) {
            span.setAttribute('error.type', result.error);
            span.setStatus({ code: SpanStatusCode.ERROR, message: result.error });
          }
          return exchange;
        },
        SpanKind.CLIENT,
      );
    },
  };
}
