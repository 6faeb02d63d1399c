// The dashboard's tables of records (the delivery log, the notices): one header row of
// column names, and cells that carry their column's name, shown beside the value where a
// narrow screen turns each row into a card (styles.css). A real element, not a CSS `content`, so that it
// wraps, and is measured, like any other text; screen readers take the name from the column
// header instead.
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
