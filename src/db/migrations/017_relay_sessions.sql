-- Relay sessions (`svc-webhooks listen`, docs/receiving.md): webhooks whose deliveries go over
-- a command line's connection to an API process rather than to a URL. Adding columns with
-- constant defaults rewrites nothing.
ALTER TABLE webhooks
  ADD COLUMN relay boolean NOT NULL DEFAULT false,
  -- The connection that holds the session now: the advisory lock key its API process holds
  -- while the connection is open, so that a process that dies lets go of it. Null: never connected.
  ADD COLUMN relay_connection bigint,
  -- Since when the session has had no open connection; null while it has one.
  ADD COLUMN relay_closed_at timestamptz;

CREATE INDEX webhooks_relay_sessions ON webhooks (account_id) WHERE relay;

-- Single-use tickets to open a session's connection, each issued by an authenticated API
-- request and redeemed by the WebSocket upgrade within seconds. Stored as hashes, as tokens are.
CREATE TABLE relay_tickets (
  ticket_hash  bytea PRIMARY KEY,
  webhook_id   text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  expires_at   timestamptz NOT NULL
);

-- A local server's answer on its way from the API process that holds the connection to the
-- worker that waits for it (which takes it at once); too large for a NOTIFY payload. Unlogged:
-- a crash loses only answers whose workers' deadlines have passed anyway.
CREATE UNLOGGED TABLE relay_answers (
  id           text PRIMARY KEY,
  answer       json NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);
