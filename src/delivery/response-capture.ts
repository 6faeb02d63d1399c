// What is kept of a receiver's response for the delivery log (docs/api.md, "What was sent and
// what came back"): its headers to 4 KiB in all and the first 4 KiB of its body, as text. The
// receiver is untrusted: nothing here grows with what it sends.
import type { IncomingHttpHeaders } from 'node:http';
import type { ReceivedResponse } from '../objects';

/** The headers kept of one response, counted as `name: value\r\n` lines in UTF-8. */
export const KEPT_HEADER_BYTES = 4 * 1024;
/** The bytes kept of one response body. */
export const KEPT_BODY_BYTES = 4 * 1024;

/** `: ` and CRLF: what a header line adds to its name and value. */
const HEADER_LINE_OVERHEAD = 4;

export interface ResponseCapture {
  /** Keeps what still fits of the next chunk of the body. */
  keep(chunk: Buffer): void;
  /** The body has ended: nothing after what arrived was cut off. */
  end(): void;
  /** What is kept, as the log stores it. */
  response(): ReceivedResponse;
}

/** Starts keeping a response whose status line and headers have arrived. */
export function captureResponse(statusCode: number, headers: IncomingHttpHeaders): ResponseCapture {
  const kept = keepHeaders(headers);
  // Allocated with the first byte of a body: an empty body costs nothing.
  let body: Buffer | undefined;
  let received = 0;
  let ended = false;
  return {
    keep(chunk) {
      const room = KEPT_BODY_BYTES - received;
      if (room > 0 && chunk.length > 0) {
        body ??= Buffer.allocUnsafe(KEPT_BODY_BYTES);
        chunk.copy(body, received, 0, Math.min(room, chunk.length));
      }
      received += chunk.length;
    },
    end() {
      ended = true;
    },
    response() {
      const bodyTruncated = !ended || received > KEPT_BODY_BYTES;
      const bytes = body?.subarray(0, Math.min(received, KEPT_BODY_BYTES)) ?? Buffer.alloc(0);
      return { statusCode, headers: kept, body: decodeText(bytes, bodyTruncated), bodyTruncated };
    },
  };
}

/**
 * The headers in the order received, each kept whole while it fits in what is left of
 * KEPT_HEADER_BYTES; one that does not fit is left out, and smaller ones after it may still
 * fit. A repeated header is one line, its values joined by `, `.
 */
export function keepHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const kept: [string, string][] = [];
  let room = KEPT_HEADER_BYTES;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const text = headerText(Array.isArray(value) ? value.join(', ') : value);
    const size = Buffer.byteLength(name) + Buffer.byteLength(text) + HEADER_LINE_OVERHEAD;
    if (size > room) continue;
    kept.push([name, text]);
    room -= size;
  }
  // fromEntries defines each name as an own property, `__proto__` included.
  return Object.fromEntries(kept);
}

/**
 * undici hands header values over as Latin-1, one character per byte: the bytes are
 * recovered and decoded as UTF-8, as the body is.
 */
function headerText(latin1: string): string {
  return NON_ASCII.test(latin1) ? decodeText(Buffer.from(latin1, 'latin1'), false) : latin1;
}
const NON_ASCII = /[\u0080-\uffff]/;

/**
 * UTF-8, invalid bytes replaced by U+FFFD, a byte order mark kept. `cut`: the bytes stop
 * before the body did, so a character split by the cut is left out rather than replaced.
 * NUL becomes U+FFFD too: PostgreSQL text cannot hold it.
 */
function decodeText(bytes: Buffer, cut: boolean): string {
  return new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes, { stream: cut }).replaceAll('\0', '\uFFFD');
}
