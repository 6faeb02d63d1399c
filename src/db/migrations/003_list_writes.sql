-- Writes reported by upstream services. (list_id, write_id) makes a write idempotent;
-- body_hash tells a repeat from a reuse of the id. account_ids are the owner and the
-- members before and after the write: the accounts whose webhooks may receive it.
CREATE TABLE list_writes (
  list_id      text NOT NULL REFERENCES lists (id) ON DELETE CASCADE,
  write_id     text NOT NULL,
  body_hash    bytea NOT NULL,
  cursor       bigint NOT NULL,
  at           timestamptz NOT NULL,
  topics       text[] NOT NULL,
  account_ids  text[] NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (list_id, write_id)
);

-- Counts each webhook's logged deliveries, so that pruning its log runs every so often
-- rather than on every insert.
ALTER TABLE webhooks ADD COLUMN deliveries_logged bigint NOT NULL DEFAULT 0;

CREATE INDEX webhooks_recipients ON webhooks (account_id) WHERE status = 'active';
