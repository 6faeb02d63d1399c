-- The audit log (docs/api.md, "Audit log"): every change made through /v3, each entry written
-- in the transaction of its change, and the service's own (the automatic pause, a relay session
-- closed past its grace) with no actor. An entry outlives what it is about (target_id and
-- token_id are not foreign keys: a deleted webhook, a revoked token stay named) and is pruned
-- after RETENTION_DAYS; it goes with its account.
CREATE TABLE audit_log (
  id              text PRIMARY KEY,
  account_id      text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  at              timestamptz NOT NULL DEFAULT now(),
  action          text NOT NULL CHECK (action IN (
                    'webhook.created', 'webhook.updated', 'webhook.deleted', 'webhook.reactivated', 'webhook.paused',
                    'webhook.secret_rotated', 'webhook.pinged', 'webhook.test_event_sent', 'delivery.redelivered',
                    'recovery.started', 'recovery.cancelled', 'token.created', 'token.revoked', 'account.updated',
                    'relay.opened', 'relay.closed')),
  target_type     text NOT NULL CHECK (target_type IN ('webhook', 'delivery', 'recovery', 'token', 'account')),
  target_id       text NOT NULL,
  -- The actor: the token a request was made with, its name then, and the client's address; all
  -- three null for the service's own changes.
  token_id        text,
  token_name      text,
  client_address  text,
  details         jsonb NOT NULL DEFAULT '{}',
  CHECK ((token_id IS NULL) = (token_name IS NULL) AND (token_id IS NULL) = (client_address IS NULL))
);
-- The account's entries, newest first; and of one action, newest first (GET /v3/account/audit-log?action=).
CREATE INDEX audit_log_account_newest ON audit_log (account_id, at DESC, id DESC);
CREATE INDEX audit_log_account_action_newest ON audit_log (account_id, action, at DESC, id DESC);
-- Retention.
CREATE INDEX audit_log_at ON audit_log (at);
