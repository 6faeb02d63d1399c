// A secret shown this once, with a copy button: a signing secret (at registration and
// rotation) or an API token (when it is made).
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/** What is shown, in words: its name (a title and a noun) and what it is for. */
export interface ShownOnce {
  title: string;
  noun: string;
  use: ComponentChildren;
}

export const SIGNING_SECRET: ShownOnce = {
  title: 'Signing secret',
  noun: 'secret',
  use: (
    <>
      Receivers verify each delivery's <code>SVC-Signature</code> with it.
    </>
  ),
};

export const API_TOKEN: ShownOnce = {
  title: 'API token',
  noun: 'token',
  use: (
    <>
      Clients send it as <code>Authorization: Bearer</code> followed by the token.
    </>
  ),
};

export function SecretOnce({ secret, onDone, shown = SIGNING_SECRET }: { secret: string; onDone: () => void; shown?: ShownOnce }) {
  const [copied, setCopied] = useState<string | null>(null);
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => field.current?.focus(), []);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('Copied to the clipboard.');
    } catch {
      field.current?.select();
      setCopied(`The browser refused the clipboard: the ${shown.noun} is selected, copy it with Ctrl+C.`);
    }
  };
  const capitalised = `${shown.noun[0].toUpperCase()}${shown.noun.slice(1)}`;
  return (
    <section class="secret" aria-labelledby="secret-heading">
      <h3 id="secret-heading">{shown.title}</h3>
      <p>Shown this once: store it now. {shown.use}</p>
      <label for="secret-value">{capitalised}</label>
      <div class="row">
        <input id="secret-value" ref={field} readOnly value={secret} class="mono" onFocus={(event) => event.currentTarget.select()} />
        <button type="button" onClick={() => void copy()}>
          Copy {shown.noun}
        </button>
      </div>
      {copied && (
        <p class="status" role="status">
          {copied}
        </p>
      )}
      <button type="button" onClick={onDone}>
        I have stored the {shown.noun}
      </button>
    </section>
  );
}
