// The fair-use meter: the account's API requests beside the deliveries to its webhooks, per
// UTC day for the last 30 days, drawn as an SVG made from the numbers (the page's policy
// allows no inline style: the bars take their colours from the stylesheet), and the same
// numbers as a table.
import type { Api, UsageDay } from './api';
import { LoadState } from './feedback';
import { PageHeading } from './heading';
import { ChartNumbers, type NumbersColumn } from './labelled-cell';
import { useLoad } from './use-load';

export function Usage({ api }: { api: Api }) {
  const usage = useLoad(() => api.usage(), [api]);
  const total = (key: 'apiRequests' | 'deliveries') => usage.data?.reduce((sum, day) => sum + day[key], 0) ?? 0;
  return (
    <section>
      <PageHeading>Usage</PageHeading>
      <p class="hint">
        Your API requests and the deliveries to your webhooks, per UTC day. Polling costs a request each time you look, whether a list
        changed or not; a webhook costs a delivery only when one does.
      </p>
      <LoadState loaded={usage} what="your usage" />
      {usage.data && (
        <>
          <p>
            In the last {usage.data.length} days: <strong>{total('apiRequests').toLocaleString('en')}</strong> API requests and{' '}
            <strong>{total('deliveries').toLocaleString('en')}</strong> deliveries.
          </p>
          <UsageChart days={usage.data} />
          <ChartNumbers
            summary="The numbers, day by day"
            class="usage"
            caption="API requests and deliveries per UTC day"
            columns={DAY_COLUMNS}
            items={usage.data}
            itemKey={(day) => day.date}
          />
        </>
      )}
    </section>
  );
}

const DAY_COLUMNS: NumbersColumn<UsageDay>[] = [
  ['Day (UTC)', (day) => day.date],
  ['API requests', (day) => day.apiRequests],
  ['Deliveries', (day) => day.deliveries],
];

// The chart's own units (its viewBox): the stylesheet scales it to the page's width.
const WIDTH = 720;
const HEIGHT = 240;
const LEFT = 48;
const RIGHT = 8;
const TOP = 12;
const BOTTOM = 28;

/** The smallest of 1, 2 or 5 times a power of ten that is at least `value`: the top of the axis. */
export function axisTop(value: number): number {
  if (value <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((step) => step * power).find((top) => top >= value)!;
}

function UsageChart({ days }: { days: UsageDay[] }) {
  const top = axisTop(Math.max(...days.map((day) => Math.max(day.apiRequests, day.deliveries))));
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = (WIDTH - LEFT - RIGHT) / days.length;
  const barWidth = Math.max(1, (slot - 2) / 2);
  const y = (value: number) => TOP + plotHeight - (value / top) * plotHeight;
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-labelledby="usage-chart-title usage-chart-description">
        <title id="usage-chart-title">API requests and deliveries per UTC day</title>
        <desc id="usage-chart-description">
          {days.length} days from {days[0].date} to {days.at(-1)!.date}; the highest bar stands for {top.toLocaleString('en')}.
        </desc>
        {[0, top / 2, top].map((tick) => (
          <g key={tick} class="axis">
            <line class="grid" x1={LEFT} x2={WIDTH - RIGHT} y1={y(tick)} y2={y(tick)} />
            <text x={LEFT - 6} y={y(tick) + 4} text-anchor="end">
              {tick.toLocaleString('en')}
            </text>
          </g>
        ))}
        {days.map((day, i) => {
          const x = LEFT + i * slot + 1;
          const labelled = i % 7 === (days.length - 1) % 7;
          return (
            <g key={day.date} class="day">
              <title>{`${day.date}: ${day.apiRequests} API requests, ${day.deliveries} deliveries`}</title>
              <rect class="bar requests" x={x} y={y(day.apiRequests)} width={barWidth} height={TOP + plotHeight - y(day.apiRequests)} />
              <rect
                class="bar deliveries"
                x={x + barWidth}
                y={y(day.deliveries)}
                width={barWidth}
                height={TOP + plotHeight - y(day.deliveries)}
              />
              {labelled && (
                <text class="axis" x={x + barWidth} y={HEIGHT - 8} text-anchor="middle">
                  {day.date.slice(5)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption class="legend">
        <span class="swatch requests" aria-hidden="true" /> API requests <span class="swatch deliveries" aria-hidden="true" /> Deliveries
      </figcaption>
    </figure>
  );
}
