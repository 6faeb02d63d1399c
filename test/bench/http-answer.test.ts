// The flooding client's reading of an answer's head (scripts/bench/lib/http-answer.ts): it
// sends its next request when it has seen the answer's end, so a wrong length stalls or
// garbles the flood.
import { describe, expect, it } from 'vitest';
import { readAnswerHead } from '../../scripts/bench/lib/http-answer';

const bytes = (text: string) => Buffer.from(text, 'latin1');

describe('readAnswerHead', () => {
  it('waits for the blank line that ends the head', () => {
    expect(readAnswerHead(bytes('HTTP/1.1 429 Too Many Requests\r\nContent-Length: 10\r\n'))).toBeNull();
  });

  it("reads the status, the body's length and where the body starts, in any case of the header names", () => {
    const head = 'HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\nCONTENT-LENGTH: 95\r\n\r\n';
    expect(readAnswerHead(bytes(`${head}{"error":`))).toEqual({ status: 429, contentLength: 95, close: false, headBytes: head.length });
  });

  it('sees Connection: close among other tokens', () => {
    expect(
      readAnswerHead(bytes('HTTP/1.1 413 Payload Too Large\r\nConnection: keep-alive, close\r\nContent-Length: 2\r\n\r\n{}')),
    ).toMatchObject({
      status: 413,
      close: true,
    });
  });

  it('has no length for a chunked body, nor for one without Content-Length', () => {
    expect(readAnswerHead(bytes('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n'))?.contentLength).toBeNull();
    expect(readAnswerHead(bytes('HTTP/1.1 200 OK\r\n\r\n'))?.contentLength).toBeNull();
  });

  it('takes bytes that are no HTTP status line for status 0, to be closed', () => {
    expect(readAnswerHead(bytes('SSH-2.0-OpenSSH\r\n\r\n'))).toMatchObject({ status: 0, close: true });
  });
});
