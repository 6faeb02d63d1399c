import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signPayload, verifySignature } from '../../src/delivery/signing';

// Built at run time so no secret-looking literal is ever committed.
const secret = 'whsec_' + 'a'.repeat(32);
const body = '{"event":"list.changed","listId":"lst_1","cursor":1,"at":"2024-01-01T00:00:00.000Z"}';

describe('signPayload', () => {
  it('matches a fixed vector', () => {
    // Computed outside Node, with openssl and with Python's hmac module:
    //   printf '%s' "$BODY" | openssl dgst -sha256 -hmac "whsec_$(printf 'a%.0s' $(seq 32))"
    expect(signPayload(body, secret)).toBe('sha256=4c408829d798ee517b5854eec7d95e90f2b6f6d1e82951bb8a7d228d3a6a2135');
  });

  it('keys with the whole secret, prefix included, and signs the exact bytes', () => {
    const expected = 'sha256=' + createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.from(body, 'utf8')).digest('hex');
    expect(signPayload(body, secret)).toBe(expected);
    expect(signPayload(Buffer.from(body, 'utf8'), secret)).toBe(expected);
    expect(signPayload(body, secret.slice('whsec_'.length))).not.toBe(expected);
  });

  it('signs non-ASCII bodies as UTF-8', () => {
    const unicode = '{"name":"Einkaufsliste für Zoë ✓"}';
    expect(signPayload(unicode, secret)).toBe(signPayload(Buffer.from(unicode, 'utf8'), secret));
    expect(signPayload(unicode, secret)).not.toBe(signPayload(Buffer.from(unicode, 'latin1'), secret));
  });

  it('is sha256= followed by 64 lowercase hex digits', () => {
    expect(signPayload('', secret)).toMatch(/^sha256=[0-9a-f]{64}$/);
  });
});

describe('verifySignature', () => {
  const header = signPayload(body, secret);

  it('accepts the signature of the exact body', () => {
    expect(verifySignature(body, header, secret)).toBe(true);
    expect(verifySignature(Buffer.from(body, 'utf8'), header, secret)).toBe(true);
  });

  it('rejects a tampered body', () => {
    expect(verifySignature(body.replace('"cursor":1', '"cursor":2'), header, secret)).toBe(false);
    expect(verifySignature(body + ' ', header, secret)).toBe(false);
  });

  it('rejects another secret', () => {
    expect(verifySignature(body, header, 'whsec_' + 'b'.repeat(32))).toBe(false);
  });

  it('rejects headers of the wrong length without throwing', () => {
    expect(verifySignature(body, header.slice(0, -1), secret)).toBe(false);
    expect(verifySignature(body, header + '0', secret)).toBe(false);
    expect(verifySignature(body, '', secret)).toBe(false);
    expect(verifySignature(body, header.slice('sha256='.length), secret)).toBe(false);
  });

  it('rejects a missing header without throwing', () => {
    expect(verifySignature(body, undefined, secret)).toBe(false);
  });

  it('rejects a same-length header with one digit changed, and upper-case hex', () => {
    const last = header.at(-1) === '0' ? '1' : '0';
    expect(verifySignature(body, header.slice(0, -1) + last, secret)).toBe(false);
    // The fixed vector has letters in it, so its upper-case form differs.
    expect(verifySignature(body, header.toUpperCase().replace('SHA256=', 'sha256='), secret)).toBe(false);
  });
});
