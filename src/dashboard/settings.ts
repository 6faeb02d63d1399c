// What the dashboard learns of the service's configuration: served by routes.ts without a
// token, read by the page (app/settings.ts) before it renders.

export interface DashboardSettings {
  /** TRACE_URL_TEMPLATE, `{traceId}` standing for a trace id; null: trace ids are shown as text. */
  traceUrlTemplate: string | null;
}
