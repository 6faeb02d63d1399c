// Some of a fixed list, chosen with checkboxes (a webhook's topics, a new token's scopes): kept
// in the list's order, with a hint and the error that is about them, linked for screen readers.
import type { ComponentChildren } from 'preact';
import { ErrorText } from './feedback';

interface Props<T extends string> {
  id: string;
  legend: string;
  /** The field the API names in an error about it. */
  name: string;
  options: readonly T[];
  chosen: readonly T[];
  onChange: (chosen: T[]) => void;
  error: unknown;
  hint?: ComponentChildren;
  /** Said after an option, in the hint's colour. */
  note?: (option: T) => string;
  /** Options that are shown but cannot be chosen. */
  disabled?: (option: T) => boolean;
}

export function CheckBoxes<T extends string>({ id, legend, name, options, chosen, onChange, error, hint, note, disabled }: Props<T>) {
  const toggle = (option: T, checked: boolean) =>
    onChange(checked ? options.filter((o) => o === option || chosen.includes(o)) : chosen.filter((o) => o !== option));
  const describedBy = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ');
  return (
    <fieldset aria-describedby={describedBy || undefined}>
      <legend>{legend}</legend>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {options.map((option) => (
        <label class="check" key={option}>
          <input
            type="checkbox"
            name={name}
            value={option}
            checked={chosen.includes(option)}
            disabled={disabled?.(option)}
            onChange={(event) => toggle(option, event.currentTarget.checked)}
          />
          {option}
          {note && <span class="hint"> ({note(option)})</span>}
        </label>
      ))}
      <ErrorText error={error} id={`${id}-error`} />
    </fieldset>
  );
}
