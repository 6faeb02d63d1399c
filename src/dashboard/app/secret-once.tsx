// A signing secret, shown this once (at registration and rotation), with a copy button.
import { useEffect, useRef, useState } from 'preact/hooks';

export function SecretOnce({ secret, onDone }: { secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => field.current?.focus(), []);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('Copied to the clipboard.');
    } catch {
      field.current?.select();
      setCopied('The browser refused the clipboard: the secret is selected, copy it with Ctrl+C.');
    }
  };
  return (
    <section class="secret" aria-labelledby="secret-heading">
      <h3 id="secret-heading">Signing secret</h3>
      <p>
        Shown this once: store it now. Receivers verify each delivery's <code>SVC-Signature</code> with it.
      </p>
      <label for="secret-value">Secret</label>
      <div class="row">
        <input id="secret-value" ref={field} readOnly value={secret} class="mono" onFocus={(event) => event.currentTarget.select()} />
        <button type="button" onClick={() => void copy()}>
          Copy secret
        </button>
      </div>
      {copied && (
        <p class="status" role="status">
          {copied}
        </p>
      )}
      <button type="button" onClick={onDone}>
        I have stored the secret
      </button>
    </section>
  );
}
