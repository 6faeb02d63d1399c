// How the dashboard says what happened: errors next to their cause, results, loading.
import type { ComponentChildren } from 'preact';
import { ApiRequestError, type DeliveryResult } from './api';
import type { Loaded } from './use-load';

/** The text to show for anything an action threw. */
export function errorText(error: unknown): string {
  if (error instanceof ApiRequestError) return error.text;
  return error instanceof Error ? error.message : String(error);
}

/** The error of `field`, or, with `fields`, one that belongs to none of them (shown by the form's button). */
export function errorOf(error: unknown, field: string | null, fields: string[] = []): unknown {
  if (!error) return null;
  const cause = error instanceof ApiRequestError ? error.field : undefined;
  if (field !== null) return cause === field ? error : null;
  return cause !== undefined && fields.includes(cause) ? null : error;
}

/** An error message, announced as it appears; `id` lets the input it explains point at it. */
export function ErrorText({ error, id }: { error: unknown; id?: string }) {
  if (!error) return null;
  return (
    <p class="error" role="alert" id={id}>
      {errorText(error)}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" role="status">
      Loading {what}…
    </p>
  );
}

/** What a view shows while its data loads, or when loading failed: the error and a way to try again. */
export function LoadState({ loaded, what }: { loaded: Pick<Loaded<unknown>, 'loading' | 'error' | 'reload'>; what: string }) {
  if (loaded.loading) return <Loading what={what} />;
  if (loaded.error === null) return null;
  return (
    <div>
      <ErrorText error={loaded.error} />
      <button type="button" onClick={loaded.reload}>
        Try again
      </button>
    </div>
  );
}

/** The last column's heading of a table whose rows end in buttons. */
export function ActionsHeading() {
  return (
    <th scope="col">
      <span class="visually-hidden">Actions</span>
    </th>
  );
}

/** A short status line read out by screen readers when it changes. */
export function Status({ children }: { children: ComponentChildren }) {
  return (
    <p class="status" role="status">
      {children}
    </p>
  );
}

/** What one attempt got, in words: "Delivered: HTTP 200 in 12 ms". */
export function describeResult(result: DeliveryResult): string {
  const status = result.statusCode === null ? '' : `HTTP ${result.statusCode} `;
  return result.delivered
    ? `Delivered: ${status}in ${result.durationMs} ms`
    : `Failed: ${result.error ?? 'error'} ${status ? `(${status.trim()}) ` : ''}after ${result.durationMs} ms`;
}

/**
 * ISO time as "2026-11-22 18:30:05 UTC": the date and the time each kept on one line, so that
 * a narrow column breaks between them, never at the date's hyphens.
 */
export function Time({ iso }: { iso: string }) {
  return (
    <>
      <span class="nowrap">{iso.slice(0, 10)}</span> <span class="nowrap">{iso.slice(11, 19)} UTC</span>
    </>
  );
}
