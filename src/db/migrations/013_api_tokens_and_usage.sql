-- An account's API tokens become rows of their own kind: each with an id, a name, the first
-- characters of the token (to tell them apart), an optional expiry and when it was last
-- used. The token each account already has keeps its hash, so every client keeps working,
-- and is named 'initial'. Its prefix cannot be known from the hash: it is filled in the
-- first time the token is used after this migration.
ALTER TABLE account_tokens
  ADD COLUMN id text,
  ADD COLUMN name text,
  ADD COLUMN prefix text,
  ADD COLUMN expires_at timestamptz,
  ADD COLUMN last_used_at timestamptz;
UPDATE account_tokens SET id = 'tkn_' || substr(md5(gen_random_uuid()::text), 1, 24), name = 'initial';
ALTER TABLE account_tokens
  ALTER COLUMN id SET NOT NULL,
  ALTER COLUMN name SET NOT NULL,
  ADD CONSTRAINT account_tokens_id_key UNIQUE (id);

-- Every API process keeps the tokens it has checked in memory; a token's row going (revoked,
-- or its account deleted) tells them all at once, whoever deletes it.
CREATE FUNCTION notify_account_token_revoked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('account_token_revoked', encode(OLD.token_hash, 'hex'));
  RETURN OLD;
END;
$$;
CREATE TRIGGER account_token_revoked AFTER DELETE ON account_tokens
  FOR EACH ROW EXECUTE FUNCTION notify_account_token_revoked();

-- The rate limiter's counters (the PostgreSQL store of rate-limiter-flexible, which reads
-- and writes them: key, points consumed, end of the window in ms since the epoch). Unlogged:
-- a counter is worth no WAL write and no flush on commit, and a crash that empties the table
-- only gives every client a fresh window.
CREATE UNLOGGED TABLE rate_limits (
  key     varchar(255) PRIMARY KEY,
  points  integer NOT NULL DEFAULT 0,
  expire  bigint
);

-- The fair-use meter: per account and UTC day, the public API requests it made and the
-- deliveries the service made to its webhooks.
CREATE TABLE account_usage (
  account_id    text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  day           date NOT NULL,
  api_requests  bigint NOT NULL DEFAULT 0,
  deliveries    bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, day)
);
