// Sealing and opening signing secrets (src/secret-keys.ts): AES-256-GCM under the first key of
// SECRET_KEYS, the webhook's id as associated data; and the worker's memory of what it opened.
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseSecretKeys } from '../src/config';
import {
  createSecretBox,
  newSecretKeys,
  rememberOpened,
  SealedSecretError,
  UnknownSecretKeyError,
  type SealedSecret,
  type SecretBox,
} from '../src/secret-keys';

const SECRET = 'whsec_the-secret-of-this-test-0123456789';
const [oldKeys, newKeys] = [newSecretKeys('old'), newSecretKeys('new')];
const oldBox = createSecretBox(parseSecretKeys(oldKeys));
/** `new` added in front of `old`, as an operator rotates the key. */
const rotatedBox = createSecretBox(parseSecretKeys(`${newKeys},${oldKeys}`));

/** The sealed bytes with one bit flipped at `at` (negative: from the end). */
function flipped({ keyId, sealed }: SealedSecret, at: number): SealedSecret {
  const bytes = Buffer.from(sealed);
  bytes[at < 0 ? bytes.length + at : at] ^= 1;
  return { keyId, sealed: bytes };
}

describe('a secret box', () => {
  it('seals under the first key, with a fresh nonce each time, and opens what it sealed', () => {
    const sealed = oldBox.seal(SECRET, 'wh_a');
    expect(sealed.keyId).toBe('old');
    // Nonce (12) ‖ ciphertext (as long as the secret) ‖ tag (16); the secret is nowhere in it.
    expect(sealed.sealed).toHaveLength(12 + SECRET.length + 16);
    expect(sealed.sealed.includes(SECRET)).toBe(false);
    expect(oldBox.open(sealed, 'wh_a')).toBe(SECRET);
    const again = oldBox.seal(SECRET, 'wh_a');
    expect(again.sealed.subarray(0, 12).equals(sealed.sealed.subarray(0, 12))).toBe(false);
    expect(again.sealed.equals(sealed.sealed)).toBe(false);
  });

  it('refuses a sealed secret altered anywhere: nonce, ciphertext or tag', () => {
    const sealed = oldBox.seal(SECRET, 'wh_a');
    for (const at of [0, 11, 12, 12 + SECRET.length - 1, -16, -1]) {
      expect(() => oldBox.open(flipped(sealed, at), 'wh_a'), `bit flipped at ${at}`).toThrow(SealedSecretError);
    }
    expect(() => oldBox.open({ keyId: 'old', sealed: sealed.sealed.subarray(0, 20) }, 'wh_a')).toThrow(SealedSecretError);
  });

  it('refuses a secret sealed for another webhook: the webhook id is its associated data', () => {
    const sealed = oldBox.seal(SECRET, 'wh_a');
    expect(() => oldBox.open(sealed, 'wh_b')).toThrow(SealedSecretError);
    expect(() => oldBox.open(sealed, 'wh_b')).toThrow('the secret sealed for wh_b does not open under key "old"');
  });

  it('names the key id it does not hold, and never the secret', () => {
    const sealed = rotatedBox.seal(SECRET, 'wh_a');
    let error: unknown;
    try {
      oldBox.open(sealed, 'wh_a');
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(UnknownSecretKeyError);
    expect(error).toMatchObject({ keyId: 'new', message: expect.stringContaining('key "new"') });
    expect(String(error)).not.toContain(SECRET);
  });

  it('opens under every key it holds after a key is added in front, and seals under the new first key', () => {
    expect(rotatedBox.keyId).toBe('new');
    expect(rotatedBox.holds('old')).toBe(true);
    expect(rotatedBox.open(oldBox.seal(SECRET, 'wh_a'), 'wh_a')).toBe(SECRET);
    expect(rotatedBox.seal(SECRET, 'wh_a').keyId).toBe('new');
    // A key of the same id with other bytes opens nothing sealed under the first.
    const impostor = createSecretBox(parseSecretKeys(newSecretKeys('old')));
    expect(() => impostor.open(oldBox.seal(SECRET, 'wh_a'), 'wh_a')).toThrow(SealedSecretError);
  });

  it('never prints a key: a parsed key shows as its type alone', () => {
    const [key] = parseSecretKeys(oldKeys);
    const base64 = oldKeys.split(':')[1];
    expect(JSON.stringify(key)).not.toContain(base64);
    expect(inspect(key, { depth: 5 })).not.toContain(base64);
    expect(inspect(key, { depth: 5 })).not.toContain(key.key.export().toString('hex'));
  });
});

describe('rememberOpened', () => {
  /** A box that counts what it opens. */
  function counting(box: SecretBox) {
    const counted = { opened: 0 };
    const inner: SecretBox = {
      ...box,
      keyId: box.keyId,
      open(secret, webhookId) {
        counted.opened++;
        return box.open(secret, webhookId);
      },
    };
    return { counted, box: inner };
  }

  it('opens a webhook’s sealed secret once, and again only when the stored bytes change', () => {
    const { counted, box } = counting(oldBox);
    const remembering = rememberOpened(box, 10);
    const sealed = oldBox.seal(SECRET, 'wh_a');
    for (let i = 0; i < 5; i++) expect(remembering.open({ keyId: 'old', sealed: Buffer.from(sealed.sealed) }, 'wh_a')).toBe(SECRET);
    expect(counted.opened).toBe(1);
    // Rotated: other bytes, opened again.
    const rotated = oldBox.seal('whsec_rotated-secret-0123456789abcdef', 'wh_a');
    expect(remembering.open(rotated, 'wh_a')).toBe('whsec_rotated-secret-0123456789abcdef');
    expect(counted.opened).toBe(2);
  });

  it('checks the associated data as the box does: bytes remembered for one webhook do not open for another', () => {
    const remembering = rememberOpened(oldBox, 10);
    const sealed = oldBox.seal(SECRET, 'wh_a');
    expect(remembering.open(sealed, 'wh_a')).toBe(SECRET);
    expect(() => remembering.open(sealed, 'wh_b')).toThrow(SealedSecretError);
  });

  it('keeps the `max` webhooks used last, and opens one it let go again', () => {
    const { counted, box } = counting(oldBox);
    const remembering = rememberOpened(box, 2);
    const sealed = Object.fromEntries(['wh_a', 'wh_b', 'wh_c'].map((id) => [id, oldBox.seal(`${SECRET}-${id}`, id)]));
    remembering.open(sealed.wh_a, 'wh_a');
    remembering.open(sealed.wh_b, 'wh_b');
    remembering.open(sealed.wh_a, 'wh_a'); // a is now the newest
    remembering.open(sealed.wh_c, 'wh_c'); // b, the oldest, goes
    expect(counted.opened).toBe(3);
    remembering.open(sealed.wh_a, 'wh_a');
    remembering.open(sealed.wh_c, 'wh_c');
    expect(counted.opened).toBe(3);
    expect(remembering.open(sealed.wh_b, 'wh_b')).toBe(`${SECRET}-wh_b`);
    expect(counted.opened).toBe(4);
  });
});
