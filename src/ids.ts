import { createHash, randomBytes } from 'node:crypto';

/** Random, non-sequential ids such as `wh_5f0c…` (96 bits). */
export function newId(prefix: 'acc' | 'wh' | 'dlv' | 'reg'): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

/** An API token: 256 random bits, shown once and stored only as its hash. */
export function newToken(): string {
  return `tok_${randomBytes(32).toString('base64url')}`;
}

/** Tokens carry 256 bits of entropy, so a fast unsalted hash is enough to store them. */
export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** The internal API's token when none is configured: 256 random bits. */
export function newInternalToken(): string {
  return `int_${randomBytes(32).toString('base64url')}`;
}

export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
