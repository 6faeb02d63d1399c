// The credentials the service makes: API tokens (stored only as hashes), the internal API's
// token, and webhooks' signing secrets. Each carries 256 random bits.
import { createHash, randomBytes } from 'node:crypto';

/** An API token: shown once and stored only as its hash. */
export function newToken(): string {
  return `tok_${randomBytes(32).toString('base64url')}`;
}

/** Tokens carry 256 bits of entropy, so a fast unsalted hash is enough to store them. */
export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** The internal API's token when none is configured. */
export function newInternalToken(): string {
  return `int_${randomBytes(32).toString('base64url')}`;
}

export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
