// An account's API tokens: stored only as SHA-256 hashes, with a name, the token's first
// characters, its scopes (fixed when it is made, migration 021), an optional expiry and when
// each was last used. Deleting a row (revoking the token, or deleting its account) notifies
// every API process on `TOKEN_REVOKED_CHANNEL`.
import postgres from 'postgres';
import { MAX_TOKENS_PER_ACCOUNT } from '../limits';
import { newId } from '../ids';
import type { ApiToken, AuditActor } from '../objects';
import { SCOPES, type Scope } from '../scopes';
import { hashToken, newToken } from '../secrets';
import { recordAudit } from './audit-log';
import type { Db, Sql } from './sql';

/** Where the trigger of migration 013 announces a deleted token: its hash, in hex. */
export const TOKEN_REVOKED_CHANNEL = 'account_token_revoked';

/** How many of a token's characters are kept in clear, to tell an account's tokens apart. */
const PREFIX_LENGTH = 8;

export const tokenPrefix = (token: string) => token.slice(0, PREFIX_LENGTH);

interface TokenRow {
  id: string;
  name: string;
  prefix: string | null;
  created_at: Date;
  last_used_at: Date | null;
  expires_at: Date | null;
  scopes: Scope[];
}

/** The columns of TokenRow, for the statements that answer one. */
const TOKEN_COLUMNS = 'id, name, prefix, created_at, last_used_at, expires_at, scopes';

const toApiToken = (row: TokenRow): ApiToken => ({
  id: row.id,
  name: row.name,
  prefix: row.prefix,
  createdAt: row.created_at.toISOString(),
  lastUsedAt: row.last_used_at?.toISOString() ?? null,
  expiresAt: row.expires_at?.toISOString() ?? null,
  scopes: row.scopes,
});

/** What a new token is: its name, expiry and scopes (in the order of SCOPES; default all six, as an account's first token has). */
export interface NewToken {
  name: string;
  expiresAt?: Date | null;
  scopes?: readonly Scope[];
}

/** Makes a token for the account and stores its hash; the token itself is returned once, here. */
export async function insertToken(
  sql: Db,
  accountId: string,
  { name, expiresAt = null, scopes = SCOPES }: NewToken,
): Promise<ApiToken & { token: string }> {
  const token = newToken();
  const [row] = await sql<TokenRow[]>`
    INSERT INTO account_tokens (token_hash, account_id, id, name, prefix, expires_at, scopes)
    VALUES (${hashToken(token)}, ${accountId}, ${newId('tkn')}, ${name}, ${tokenPrefix(token)}, ${expiresAt}, ${[...scopes]}::text[])
    RETURNING ${sql.unsafe(TOKEN_COLUMNS)}`;
  return { ...toApiToken(row), token };
}

/**
 * A new token for the account, recorded as token.created (with its name, scopes and expiry,
 * never the token), or null when it has MAX_TOKENS_PER_ACCOUNT already. The account's row lock
 * makes two creations at once count one after the other.
 */
export async function createToken(
  sql: Sql,
  accountId: string,
  options: NewToken,
  actor: AuditActor,
): Promise<(ApiToken & { token: string }) | null> {
  return sql.begin(async (tx) => {
    await tx`SELECT 1 FROM accounts WHERE id = ${accountId} FOR UPDATE`;
    const [{ count }] = await tx<{ count: number }[]>`SELECT count(*)::int AS count FROM account_tokens WHERE account_id = ${accountId}`;
    if (count >= MAX_TOKENS_PER_ACCOUNT) return null;
    const created = await insertToken(tx, accountId, options);
    const { name, scopes, expiresAt } = created;
    await recordAudit(tx, {
      accountId,
      action: 'token.created',
      target: tokenTarget(created.id),
      actor,
      details: { name, scopes, expiresAt },
    });
    return created;
  });
}

const tokenTarget = (id: string) => ({ type: 'token', id }) as const;

/** The account's tokens, oldest first. */
export async function listTokens(sql: Db, accountId: string): Promise<ApiToken[]> {
  const rows = await sql<TokenRow[]>`
    SELECT ${sql.unsafe(TOKEN_COLUMNS)} FROM account_tokens WHERE account_id = ${accountId} ORDER BY created_at, id`;
  return rows.map(toApiToken);
}

/** The account's token with this id, or null. */
export async function findToken(sql: Db, accountId: string, tokenId: string): Promise<ApiToken | null> {
  const [row] = await sql<TokenRow[]>`
    SELECT ${sql.unsafe(TOKEN_COLUMNS)} FROM account_tokens WHERE id = ${tokenId} AND account_id = ${accountId}`;
  return row ? toApiToken(row) : null;
}

/** Deletes the account's token, recorded as token.revoked; its hash, or null when the account has no such token. */
export function deleteToken(sql: Sql, accountId: string, tokenId: string, actor: AuditActor): Promise<Buffer | null> {
  return sql.begin(async (tx) => {
    const [row] = await tx<{ tokenHash: Buffer; name: string }[]>`
      DELETE FROM account_tokens WHERE id = ${tokenId} AND account_id = ${accountId} RETURNING token_hash AS "tokenHash", name`;
    if (!row) return null;
    await recordAudit(tx, { accountId, action: 'token.revoked', target: tokenTarget(tokenId), actor, details: { name: row.name } });
    return row.tokenHash;
  });
}

/** What a request's token stands for. */
export interface TokenGrant {
  tokenId: string;
  /** Fixed when it is made, as its scopes are: the audit log names the token by it. */
  tokenName: string;
  accountId: string;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  scopes: Scope[];
}

/** The token whose hash this is, expired or not, or null. */
export async function findTokenByHash(sql: Db, tokenHash: Buffer): Promise<TokenGrant | null> {
  const [row] = await sql<TokenGrant[]>`
    SELECT id AS "tokenId", name AS "tokenName", account_id AS "accountId", expires_at AS "expiresAt", last_used_at AS "lastUsedAt", scopes
    FROM account_tokens WHERE token_hash = ${tokenHash}`;
  return row ?? null;
}

/** A token seen in use, at `at`, with its first characters. */
export interface TokenUse {
  tokenId: string;
  at: Date;
  prefix: string;
}

/**
 * Sets `last_used_at` of each token, unless it moved less than a minute before (another API
 * process may have set it), and the prefix of a token made before tokens had one.
 */
export async function markTokensUsed(sql: Db, uses: readonly TokenUse[]): Promise<void> {
  if (uses.length === 0) return;
  const rows = uses.map((use) => ({ id: use.tokenId, at: use.at.toISOString(), prefix: use.prefix }));
  await sql`
    UPDATE account_tokens t SET last_used_at = u.at, prefix = coalesce(t.prefix, u.prefix)
    FROM jsonb_to_recordset(${sql.json(rows)}) AS u(id text, at timestamptz, prefix text)
    WHERE t.id = u.id AND (t.last_used_at IS NULL OR t.last_used_at <= u.at - interval '1 minute')`;
}

export interface RevocationListener {
  /** A token's row was deleted: its hash, in hex. */
  onRevoked(tokenHashHex: string): void;
  /** Listening (again): a notification may have been missed before. */
  onListening(): void;
  /** Not listening until the next onListening: notifications may be missed. */
  onLost(): void;
}

/** Between two attempts to listen again after the connection was lost. */
const RELISTEN_MS = 1000;

export interface RevocationChannel {
  /**
   * The connection that listens. PostgreSQL sends a listening session the notifications
   * committed before a statement of its ends, ahead of that statement's answer: a statement
   * sent on it after a token's revocation was committed is answered after the revocation has
   * been heard here.
   */
  connection: Sql;
  /** Starts listening; resolves after the first attempt, listening or not. */
  listen(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A connection of its own that listens on `TOKEN_REVOKED_CHANNEL`, and listens again
 * whenever it is lost. It connects at the first statement sent on it, or at listen().
 */
export function openRevocationChannel(sql: Sql, listener: RevocationListener): RevocationChannel {
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const lost = () => {
    listener.onLost();
    if (stopped || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      void subscribe();
    }, RELISTEN_MS).unref();
  };
  const connection = postgres({
    ...sql.options,
    max: 1,
    idle_timeout: null,
    max_lifetime: null,
    fetch_types: false,
    // postgres.js's own option (its listen() uses it, on options parsed as these are), missing from its types.
    onnotify: (channel: string, payload: string) => {
      if (channel === TOKEN_REVOKED_CHANNEL) listener.onRevoked(payload);
    },
    onclose: lost,
  } as unknown as postgres.Options<Record<string, never>>);
  async function subscribe(): Promise<void> {
    try {
      await connection.unsafe(`LISTEN ${TOKEN_REVOKED_CHANNEL}`);
      if (!stopped) listener.onListening();
    } catch {
      lost();
    }
  }
  return {
    connection,
    listen: subscribe,
    async stop() {
      stopped = true;
      clearTimeout(retry);
      await connection.end({ timeout: 1 });
    },
  };
}
