// A labelled text input with its hint and the error that is about it, linked for screen readers.
import type { TargetedInputEvent } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { ErrorText, errorOf } from './feedback';

interface Props {
  id: string;
  name: string;
  label: string;
  hint?: string;
  value: string;
  onValue: (value: string) => void;
  /** The error to show beneath it, or null. */
  error: unknown;
  /** Typed as a password: not shown on screen. */
  concealed?: boolean;
  inputMode?: 'url' | 'email';
  required?: boolean;
  /** Focused when it appears (the attribute alone is honoured only at some later frame). */
  autoFocus?: boolean;
  class?: string;
}

export function TextField({ id, label, hint, value, onValue, error, concealed = false, autoFocus = false, ...input }: Props) {
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (autoFocus) field.current?.focus();
  }, [autoFocus]);
  const describedBy = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ');
  const attributes = {
    ...input,
    ref: field,
    id,
    value,
    onInput: (event: TargetedInputEvent<HTMLInputElement>) => onValue(event.currentTarget.value),
    'aria-invalid': error ? true : undefined,
    'aria-describedby': describedBy || undefined,
  };
  return (
    <>
      <label for={id}>{label}</label>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {/* Two elements rather than a computed type: Preact types each kind of input apart. */}
      {concealed ? <input {...attributes} type="password" /> : <input {...attributes} type="text" />}
      <ErrorText error={error} id={`${id}-error`} />
    </>
  );
}

/**
 * A form's one text field and what its action failed with: an error about the field beside
 * it, any other error beneath it.
 */
export function SoleField({ actionError, ...field }: Omit<Props, 'error'> & { actionError: unknown }) {
  return (
    <>
      <TextField {...field} error={errorOf(actionError, field.name)} />
      <ErrorText error={errorOf(actionError, null, [field.name])} />
    </>
  );
}
