// A webhook's health: its event deliveries of the last 24 hours (GET /v3/webhooks/{id}/health),
// delivered beside failed, hour by hour, drawn as an SVG made from the numbers (the page's
// policy allows no inline style: the SVG carries only geometry, and the stylesheet colours the
// bars by class), with the totals in words beside it. Small in the list of webhooks, with an
// axis, hour labels and the numbers as a table on the webhook's page.
import type { Api, HealthHour, Webhook, WebhookHealth } from './api';
import { LoadState, Time } from './feedback';
import { ChartNumbers, type NumbersColumn } from './labelled-cell';
import { useLoad } from './use-load';
import { axisTop } from './usage';

/** The totals in words: "Delivered 120, failed 3 in the last 24 hours", and the skipped ones when there are. */
export function healthSummary(health: WebhookHealth): string {
  const skipped = health.skipped24h > 0 ? `, ${health.skipped24h.toLocaleString('en')} skipped while paused` : '';
  return `Delivered ${health.delivered24h.toLocaleString('en')}, failed ${health.failed24h.toLocaleString('en')}${skipped} in the last 24 hours`;
}

/** An hour as its title says it: "2026-11-22 14:00–15:00 UTC". */
function hourText(hour: string): string {
  const end = new Date(Date.parse(hour) + 3_600_000).toISOString();
  return `${hour.slice(0, 10)} ${hour.slice(11, 16)}–${end.slice(11, 16)} UTC`;
}

/** The list's cell: the bars, small, and the totals (the webhook's own until the hours load). */
export function HealthBars({ api, webhook }: { api: Api; webhook: Webhook }) {
  // Loaded again when the webhook is: its `updatedAt` moves with every change.
  const loaded = useLoad(() => api.getWebhookHealth(webhook.id), [api, webhook.id, webhook.updatedAt]);
  return (
    <figure class="health compact">
      {loaded.data && <HealthChart id={`health-${webhook.id}`} hours={loaded.data.hours} size={COMPACT} />}
      <figcaption class="health-summary">{healthSummary(loaded.data ?? webhook.health)}</figcaption>
    </figure>
  );
}

/** The webhook page's section: the bars with an axis, the totals, the last times, and the numbers hour by hour. */
export function WebhookHealthSection({ api, webhook }: { api: Api; webhook: Webhook }) {
  const loaded = useLoad(() => api.getWebhookHealth(webhook.id), [api, webhook.id, webhook.updatedAt]);
  const health = loaded.data ?? webhook.health;
  return (
    <section class="health-section" aria-labelledby="health-heading">
      <h2 id="health-heading">Last 24 hours</h2>
      <figure class="health large">
        {loaded.data && <HealthChart id="health-detail" hours={loaded.data.hours} size={LARGE} />}
        <figcaption>
          <p class="health-summary">{healthSummary(health)}.</p>
          <p class="legend">
            <span class="swatch delivered" aria-hidden="true" /> Delivered <span class="swatch failed" aria-hidden="true" /> Failed
          </p>
        </figcaption>
      </figure>
      <LoadState loaded={loaded} what="the last 24 hours" />
      <dl class="facts">
        <dt>Last delivered</dt>
        <dd>{health.lastDeliveredAt ? <Time iso={health.lastDeliveredAt} /> : 'Never'}</dd>
        <dt>Last failed</dt>
        <dd>{health.lastFailedAt ? <Time iso={health.lastFailedAt} /> : 'Never'}</dd>
      </dl>
      {loaded.data && (
        <ChartNumbers
          summary="The numbers, hour by hour"
          class="health-hours"
          caption="Event deliveries per UTC hour"
          columns={HOUR_COLUMNS}
          items={loaded.data.hours}
          itemKey={(hour) => hour.hour}
        />
      )}
    </section>
  );
}

const HOUR_COLUMNS: NumbersColumn<HealthHour>[] = [
  ['Hour (UTC)', (hour) => hourText(hour.hour)],
  ['Delivered', (hour) => hour.delivered],
  ['Failed', (hour) => hour.failed],
  ['Skipped', (hour) => hour.skipped],
];

/** The chart's own units (its viewBox), which the stylesheet scales to the page: room for an axis and hour labels, or none. */
interface ChartSize {
  width: number;
  height: number;
  left: number;
  /** Room after the last bar: half an hour's label. */
  right: number;
  top: number;
  bottom: number;
  /** Whether it has an axis with its figures and hour labels. */
  axis: boolean;
}
const COMPACT: ChartSize = { width: 240, height: 48, left: 0, right: 0, top: 2, bottom: 1, axis: false };
const LARGE: ChartSize = { width: 720, height: 200, left: 48, right: 16, top: 12, bottom: 28, axis: true };

function HealthChart({ id, hours, size }: { id: string; hours: HealthHour[]; size: ChartSize }) {
  const { width, height, left, right, top, bottom, axis } = size;
  const highest = Math.max(...hours.map((hour) => Math.max(hour.delivered, hour.failed)));
  // The small chart's tallest bar fills it; the large one's axis ends at a round number.
  const scale = axis ? axisTop(highest) : Math.max(1, highest);
  const plotHeight = height - top - bottom;
  const slot = (width - left - right) / hours.length;
  const barWidth = (slot - 1) / 2;
  const baseline = top + plotHeight;
  // A bar of one delivery is never too thin to see.
  const barHeight = (value: number) => (value === 0 ? 0 : Math.max(1, (value / scale) * plotHeight));
  const first = hours[0].hour;
  const last = hours.at(-1)!.hour;
  return (
    <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-labelledby={`${id}-title ${id}-description`}>
      <title id={`${id}-title`}>Deliveries per UTC hour, the last 24 hours: delivered beside failed</title>
      <desc id={`${id}-description`}>
        {hours.length} hours from {hourText(first)} to {hourText(last)}; the highest bar stands for {highest.toLocaleString('en')}.
      </desc>
      {axis &&
        // Whole deliveries only: an axis up to 1 has no tick at a half.
        [0, scale / 2, scale].filter(Number.isInteger).map((tick) => (
          <g key={tick} class="axis">
            <line class="grid" x1={left} x2={width - right} y1={baseline - barHeight(tick)} y2={baseline - barHeight(tick)} />
            <text x={left - 6} y={baseline - barHeight(tick) + 4} text-anchor="end">
              {tick.toLocaleString('en')}
            </text>
          </g>
        ))}
      <line class="baseline" x1={left} x2={width - right} y1={baseline} y2={baseline} />
      {hours.map((hour, i) => {
        const x = left + i * slot + 0.5;
        return (
          <g key={hour.hour} class="hour">
            <rect class="bar delivered" x={x} y={baseline - barHeight(hour.delivered)} width={barWidth} height={barHeight(hour.delivered)}>
              <title>{`${hourText(hour.hour)}: ${hour.delivered} delivered`}</title>
            </rect>
            <rect
              class="bar failed"
              x={x + barWidth}
              y={baseline - barHeight(hour.failed)}
              width={barWidth}
              height={barHeight(hour.failed)}
            >
              <title>{`${hourText(hour.hour)}: ${hour.failed} failed`}</title>
            </rect>
            {axis && i % 6 === (hours.length - 1) % 6 && (
              <text class="axis" x={x + barWidth} y={height - 8} text-anchor="middle">
                {hour.hour.slice(11, 16)}
              </text>
            )}
          </g>
        );
      })}
    </svg>
  );
}
