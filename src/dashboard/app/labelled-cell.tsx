// A table cell that carries its column's name, shown beside its value where a narrow screen
// turns each row into a card (styles.css). A real element, not a CSS `content`, so that it
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
