// Secrets at rest (signing secrets, and receivers' credentials): sealed with AES-256-GCM under
// the keys of SECRET_KEYS (the first seals, every one opens), a fresh 96-bit nonce each, and as
// associated data what it is sealed for (a webhook's id for its signing secret, another string
// for its credentials), so that a sealed secret opens only as what it was sealed for. Stored as
// the key's id beside nonce ‖ ciphertext ‖ tag; the key itself never leaves the process.
import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

/** One key of SECRET_KEYS. A KeyObject prints as its type alone, never its bytes. */
export interface SecretKey {
  id: string;
  key: KeyObject;
}

/** A secret as PostgreSQL keeps it: the id of the key that sealed it, and nonce ‖ ciphertext ‖ tag. */
export interface SealedSecret {
  keyId: string;
  sealed: Buffer;
}

export interface SecretBox {
  /** The first key's id: what seal() seals under. */
  readonly keyId: string;
  /** Whether a key of this id is configured (it can open what was sealed under it). */
  holds(keyId: string): boolean;
  /** `sealedFor`: a webhook's id for its signing secret (src/delivery/receiver-credentials.ts has the other). */
  seal(secret: string, sealedFor: string): SealedSecret;
  /** Throws UnknownSecretKeyError for a key not configured, SealedSecretError for bytes that do not open. */
  open(secret: SealedSecret, sealedFor: string): string;
}

const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** A key id: 1 to 32 letters, digits, `_` or `-`. */
export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;

export class UnknownSecretKeyError extends Error {
  override readonly name = 'UnknownSecretKeyError';
  constructor(readonly keyId: string) {
    super(`secrets sealed under key "${keyId}" cannot be opened: SECRET_KEYS holds no key of that id`);
  }
}

export class SealedSecretError extends Error {
  override readonly name = 'SealedSecretError';
}

/** A secret key from its 32 bytes in base64 (standard or URL-safe alphabet); null for anything else. */
export function secretKeyFrom(base64: string): KeyObject | null {
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(base64)) return null;
  const bytes = Buffer.from(base64, 'base64');
  return bytes.length === KEY_BYTES ? createSecretKey(bytes) : null;
}

/** A SECRET_KEYS value of one new random key, as kept under the data directory when SECRET_KEYS is unset. */
export function newSecretKeys(keyId: string): string {
  return `${keyId}:${randomBytes(KEY_BYTES).toString('base64')}`;
}

/** Seals under the first of `keys` and opens under any of them. */
export function createSecretBox(keys: readonly SecretKey[]): SecretBox {
  if (keys.length === 0) throw new Error('a secret box needs at least one key');
  const byId = new Map(keys.map(({ id, key }) => [id, key]));
  const first = keys[0];
  return {
    keyId: first.id,
    holds: (keyId) => byId.has(keyId),
    seal(secret, sealedFor) {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv(ALGORITHM, first.key, nonce, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(sealedFor, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return { keyId: first.id, sealed: Buffer.concat([nonce, ciphertext, cipher.getAuthTag()]) };
    },
    open({ keyId, sealed }, sealedFor) {
      const key = byId.get(keyId);
      if (key === undefined) throw new UnknownSecretKeyError(keyId);
      const cannotOpen = () =>
        new SealedSecretError(
          `the secret sealed for ${sealedFor} does not open under key "${keyId}": altered, or sealed for something else`,
        );
      if (sealed.length < NONCE_BYTES + TAG_BYTES) throw cannotOpen();
      const decipher = createDecipheriv(ALGORITHM, key, sealed.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(sealedFor, 'utf8'));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      try {
        return Buffer.concat([decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        throw cannotOpen();
      }
    },
  };
}

/**
 * What is made of sealed bytes, per key, for the `max` keys used last: made once while the
 * bytes stay the same, and again once they change (a rotation, a re-encryption, an edit).
 * `dropped` is told of each value that goes.
 */
export class KeptWhileSealed<T> {
  private readonly kept = new Map<string, { sealed: SealedSecret; value: T }>();

  constructor(
    private readonly max: number,
    private readonly dropped: (value: T) => void = () => {},
  ) {}

  get(key: string, sealed: SealedSecret, make: () => T): T {
    const known = this.kept.get(key);
    // A Map iterates in insertion order: taken out and put back, an entry is the newest.
    this.kept.delete(key);
    if (known && known.sealed.keyId === sealed.keyId && known.sealed.sealed.equals(sealed.sealed)) {
      this.kept.set(key, known);
      return known.value;
    }
    if (known) this.dropped(known.value);
    const value = make();
    this.kept.set(key, { sealed: { keyId: sealed.keyId, sealed: Buffer.from(sealed.sealed) }, value });
    if (this.kept.size > this.max) {
      const [oldest, evicted] = this.kept.entries().next().value!;
      this.kept.delete(oldest);
      this.dropped(evicted.value);
    }
    return value;
  }

  /** Every value kept, taken out. */
  takeAll(): T[] {
    const values = [...this.kept.values()].map(({ value }) => value);
    this.kept.clear();
    return values;
  }
}

/**
 * `box`, remembering what it opened, per what it was sealed for, for the `max` used last: a
 * delivery to a webhook whose sealed secret is the one opened before takes it from memory. A
 * rotation or a re-encryption stores other bytes, which are opened again. Sealing is the box's own.
 */
export function rememberOpened(box: SecretBox, max: number): SecretBox {
  const opened = new KeptWhileSealed<string>(max);
  return {
    get keyId() {
      return box.keyId;
    },
    holds: (keyId) => box.holds(keyId),
    seal: (secret, sealedFor) => box.seal(secret, sealedFor),
    open: (secret, sealedFor) => opened.get(sealedFor, secret, () => box.open(secret, sealedFor)),
  };
}
