// The dashboard's tables of records (the delivery log, the notices) and of a chart's numbers
// (a webhook's hours, the account's usage): one header row of column names, and cells that
// carry their column's name, shown beside the value where a narrow screen turns each row into a
// card (styles.css). A real element, not a CSS `content`, so that it wraps, and is measured,
// like any other text; screen readers take the name from the column header instead.
import type { ComponentChildren } from 'preact';

export function LabelledCell({ label, class: className, children }: { label: string; class?: string; children: ComponentChildren }) {
  return (
    <td data-label={label} class={className}>
      <span class="cell-label" aria-hidden="true">
        {label}
      </span>
      <span class="cell-value">{children}</span>
    </td>
  );
}

/** A table that scrolls sideways when it must; an empty column name is read by screen readers only, as `hiddenName`. */
export function RecordTable(props: {
  class: string;
  caption: string;
  columns: string[];
  hiddenName?: string;
  children: ComponentChildren;
}) {
  return (
    <div class="table-scroll">
      <table class={props.class}>
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th scope="col" key={column}>
                {column || <span class="visually-hidden">{props.hiddenName}</span>}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/** A column of a chart's numbers: its label, and its cell in an item's row. */
export type NumbersColumn<T> = [label: string, cell: (item: T) => ComponentChildren];

/**
 * A chart's numbers as a table, folded away under `summary`: a row per item, newest first (the
 * chart draws them oldest first), a cell per column.
 */
export function ChartNumbers<T>(props: {
  summary: string;
  class: string;
  caption: string;
  columns: NumbersColumn<T>[];
  items: T[];
  itemKey: (item: T) => string;
}) {
  return (
    <details>
      <summary>{props.summary}</summary>
      <table class={props.class}>
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map(([label]) => (
              <th scope="col" key={label}>
                {label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {[...props.items].reverse().map((item) => (
            <tr key={props.itemKey(item)}>
              {props.columns.map(([label, cell]) => (
                <LabelledCell key={label} label={label}>
                  {cell(item)}
                </LabelledCell>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}
