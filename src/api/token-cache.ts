// The tokens this API process has checked, kept in memory so that a request with a known
// token costs no lookup: its account, expiry and scopes, read from its row. None of them
// changes while the row exists (a token's scopes are fixed when it is made: migration 021
// refuses a change), so what is kept is the row's until the row goes, and the route table is
// checked with no statement. Revocation is still at once for every process: deleting a token's
// row notifies every process (LISTEN/NOTIFY, migration 013), and the notification reaches a
// process ahead of the answer to any statement it sends on its listening connection after
// the revocation's commit. The rate limiter's statement of each request goes there
// (account-access.ts), and the request's token is checked again once it is answered.
// While a process is not listening (at start, or after its listening connection was lost)
// nothing is kept: every request looks its token up. An entry is looked up again after a
// minute all the same, so that nothing unforeseen keeps a token alive for long.
// known() answers from the entries alone, for refusing a request without a statement (the
// front door, and account-access.ts before a lookup): from an entry of any age, since it only
// picks the limit that refuses a request and never lets one in.
import type { Sql } from '../db/sql';
import { findTokenByHash, openRevocationChannel, type TokenGrant } from '../db/tokens';
import { hashToken } from '../secrets';

/** How long an entry is trusted before the token is looked up again. */
const KEPT_MS = 60_000;
/**
 * Entries kept at most; past it the oldest go, so that a flood of random tokens takes a bounded
 * memory (about 17 MB of unknown ones at most, 36 MB of grants). Unknown tokens are kept too
 * (as null), so a client repeating a bad token costs nothing; from an address over its limit a
 * token is not looked up, so not kept (account-access.ts).
 */
const MAX_ENTRIES = 100_000;

export interface TokenCache {
  /** The grant of a token (expired or not), or null for a token that is unknown or revoked. */
  find(token: string): Promise<TokenGrant | null>;
  /**
   * Without a statement: the grant kept for a token (expired or not), null for one kept as
   * unknown or revoked, undefined for one not kept, or while not listening. For refusing only.
   */
  known(token: string): TokenGrant | null | undefined;
  /** Whether this process has heard, since find(), that the token was revoked. */
  revokedSince(token: string): boolean;
  /** Forgets a token this process has revoked, without waiting for its notification. */
  forget(tokenHash: Buffer): void;
  /** The connection that hears revocations (see RevocationChannel.connection). */
  connection: Sql;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createTokenCache(sql: Sql, { maxEntries = MAX_ENTRIES } = {}): TokenCache {
  const entries = new Map<string, { grant: TokenGrant | null; checkedAt: number }>();
  let listening = false;
  // Moves whenever an entry may have gone stale; a lookup that saw it move keeps nothing.
  let generation = 0;

  const forgetAll = () => {
    entries.clear();
    generation += 1;
  };
  const forgetHash = (hex: string) => {
    keep(hex, null);
    generation += 1;
  };
  const keep = (hex: string, grant: TokenGrant | null) => {
    entries.delete(hex);
    if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
    entries.set(hex, { grant, checkedAt: Date.now() });
  };
  // The hash of the token asked about last: a request's token is asked about three times in a
  // row (the front door, the early refusal, find()), and hashing is most of what each costs.
  // The token itself is held only until the next is asked about, as its request holds it.
  let last = { token: '', hex: '' };
  const hexOf = (token: string) => {
    if (token !== last.token) last = { token, hex: hashToken(token).toString('hex') };
    return last.hex;
  };
  const channel = openRevocationChannel(sql, {
    onRevoked: forgetHash,
    onListening() {
      forgetAll();
      listening = true;
    },
    onLost() {
      listening = false;
      forgetAll();
    },
  });

  return {
    async find(token) {
      const hex = hexOf(token);
      const kept = listening ? entries.get(hex) : undefined;
      if (kept && Date.now() - kept.checkedAt < KEPT_MS) return kept.grant;
      const seen = generation;
      const grant = await findTokenByHash(sql, Buffer.from(hex, 'hex'));
      if (listening && seen === generation) keep(hex, grant);
      return grant;
    },
    known: (token) => (listening ? entries.get(hexOf(token))?.grant : undefined),
    revokedSince: (token) => entries.get(hexOf(token))?.grant === null,
    forget: (tokenHash) => forgetHash(tokenHash.toString('hex')),
    connection: channel.connection,
    start: () => channel.listen(),
    stop: () => channel.stop(),
  };
}
