-- Accounts and their API tokens (stored only as SHA-256 hashes).
CREATE TABLE accounts (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE account_tokens (
  token_hash  bytea PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX account_tokens_account_id ON account_tokens (account_id);

-- Shopping lists as reported by upstream services; cursor counts the list's writes.
CREATE TABLE lists (
  id                text PRIMARY KEY,
  owner_account_id  text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  cursor            bigint NOT NULL DEFAULT 0,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX lists_owner_account_id ON lists (owner_account_id);

CREATE TABLE list_members (
  list_id     text NOT NULL REFERENCES lists (id) ON DELETE CASCADE,
  account_id  text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  PRIMARY KEY (list_id, account_id)
);
CREATE INDEX list_members_account_id ON list_members (account_id);

-- One row per subscription; the URL is stored WHATWG-normalised and is its identity
-- within an account. The secret is needed in clear to sign, so it never leaves this table
-- except in the registration response.
CREATE TABLE webhooks (
  id                    text PRIMARY KEY,
  account_id            text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  url                   text NOT NULL,
  secret                text NOT NULL,
  events                text[] NOT NULL,
  list_ids              text[] NOT NULL DEFAULT '{}',
  status                text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
  paused_reason         text CHECK (paused_reason IN ('auto_failures', 'manual')),
  consecutive_failures  integer NOT NULL DEFAULT 0,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  UNIQUE (account_id, url)
);

-- A registration in flight: the id and secret a new webhook will have, so the ping can
-- be signed with them before the webhook exists, without the secret entering Temporal.
-- The secret is cleared once the registration is decided.
CREATE TABLE registrations (
  id          text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  webhook_id  text NOT NULL,
  secret      text,
  outcome     text,
  created_at  timestamptz NOT NULL DEFAULT now()
);
