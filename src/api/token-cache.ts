// The tokens this API process has checked, kept in memory so that a request with a known
// token costs PostgreSQL nothing. Revocation is still at once for every process: deleting a
// token's row notifies every process (LISTEN/NOTIFY, migration 013), and each forgets it.
// While a process is not listening (at start, or after its listening connection was lost)
// nothing is kept: every request looks its token up. An entry is looked up again after a
// minute all the same, so that nothing unforeseen keeps a token alive for long.
import { findTokenByHash, listenForRevokedTokens, type TokenGrant } from '../db/tokens';
import type { Sql } from '../db/sql';
import { hashToken } from '../secrets';

/** How long an entry is trusted before the token is looked up again. */
const KEPT_MS = 60_000;
/** Entries kept at most; past it the oldest go. Unknown tokens are kept too (as null), so a client repeating a bad token costs nothing. */
const MAX_ENTRIES = 100_000;
/** How long a revocation waits at most for its own notification to come back. */
const ECHO_WAIT_MS = 1000;
/** Revocations heard lately, for a revocation whose notification came back before it waited. */
const HEARD_KEPT = 1000;

export interface TokenCache {
  /** The grant of a token (expired or not), or null for a token that is unknown or revoked. */
  find(token: string): Promise<TokenGrant | null>;
  /**
   * Forgets a token this process has revoked, then waits (at most ECHO_WAIT_MS) until its
   * notification has come back here: PostgreSQL has then sent it to every listening process.
   */
  revoked(tokenHash: Buffer): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createTokenCache(sql: Sql): TokenCache {
  const entries = new Map<string, { grant: TokenGrant | null; checkedAt: number }>();
  let listening = false;
  // Moves whenever an entry may have gone stale; a lookup that saw it move keeps nothing.
  let generation = 0;
  let listener: { stop(): Promise<void> } | undefined;
  const heard = new Set<string>();
  const echoes = new Map<string, () => void>();

  const forgetAll = () => {
    entries.clear();
    generation += 1;
  };
  const forgetHash = (hex: string) => {
    entries.set(hex, { grant: null, checkedAt: Date.now() });
    generation += 1;
  };
  const hear = (hex: string) => {
    forgetHash(hex);
    if (heard.size >= HEARD_KEPT) heard.delete(heard.values().next().value!);
    heard.add(hex);
    echoes.get(hex)?.();
  };
  const keep = (hex: string, grant: TokenGrant | null) => {
    if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
    entries.set(hex, { grant, checkedAt: Date.now() });
  };

  return {
    async find(token) {
      const hash = hashToken(token);
      const hex = hash.toString('hex');
      const kept = listening ? entries.get(hex) : undefined;
      if (kept && Date.now() - kept.checkedAt < KEPT_MS) return kept.grant;
      const seen = generation;
      const grant = await findTokenByHash(sql, hash);
      if (listening && seen === generation) keep(hex, grant);
      return grant;
    },
    async revoked(tokenHash) {
      const hex = tokenHash.toString('hex');
      forgetHash(hex);
      if (!listening || heard.has(hex)) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          echoes.delete(hex);
          resolve();
        };
        const timer = setTimeout(done, ECHO_WAIT_MS);
        echoes.set(hex, done);
      });
    },
    async start() {
      listener = await listenForRevokedTokens(sql, {
        onRevoked: hear,
        onListening() {
          forgetAll();
          listening = true;
        },
        onLost() {
          listening = false;
          forgetAll();
        },
      });
    },
    async stop() {
      await listener?.stop();
    },
  };
}
