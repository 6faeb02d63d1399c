// The head of an HTTP/1.1 answer, read as cheaply as the flooding client needs it: its status,
// where its body ends (Content-Length) and whether the server closes the connection after it.

export interface AnswerHead {
  /** 0 when the bytes are no HTTP/1.x status line. */
  status: number;
  /** The body's length; null when it ends only when the connection does (no Content-Length, or chunked). */
  contentLength: number | null;
  /** `Connection: close`: the server ends the connection after this answer. */
  close: boolean;
  /** Bytes of the head, its blank line included: the body starts here. */
  headBytes: number;
}

const HEAD_END = Buffer.from('\r\n\r\n');

/** The head of the answer that `bytes` start with, or null while its blank line has not come. */
export function readAnswerHead(bytes: Buffer): AnswerHead | null {
  const end = bytes.indexOf(HEAD_END);
  if (end < 0) return null;
  const head = bytes.toString('latin1', 0, end);
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(head);
  const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
  const chunked = /\r\ntransfer-encoding:[^\r]*chunked/i.test(head);
  return {
    status: status ? Number(status[1]) : 0,
    contentLength: length && !chunked ? Number(length[1]) : null,
    close: !status || /\r\nconnection:[^\r]*\bclose\b/i.test(head),
    headBytes: end + HEAD_END.length,
  };
}
