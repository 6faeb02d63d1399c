-- Recoveries (POST /v3/webhooks/{id}/recoveries): what each was asked for and how it ended.
-- While it runs, its counts are read from its items (each send writes its own item only);
-- once it has settled, they are kept here. The API reads a recovery's progress from
-- PostgreSQL alone.
CREATE TABLE recoveries (
  id              text PRIMARY KEY,
  webhook_id      text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  since           timestamptz NOT NULL,
  until           timestamptz NOT NULL,
  status          text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'completed', 'stopped', 'cancelled')),
  stopped_reason  text CHECK (stopped_reason IN ('receiver_failing', 'webhook_paused', 'webhook_deleted')),
  total           integer NOT NULL,
  -- Counted from the items when the recovery settles; 0 until then.
  sent            integer NOT NULL DEFAULT 0,
  delivered       integer NOT NULL DEFAULT 0,
  failed          integer NOT NULL DEFAULT 0,
  created_at      timestamptz NOT NULL DEFAULT now(),
  finished_at     timestamptz,
  -- When its workflow ended, with no send of it under way any more. A cancelled recovery is
  -- finished at once but settles only then: until it has, no other recovery of its webhook
  -- may start, so that no delivery is sent by two recoveries at once.
  settled_at      timestamptz
);
-- One unsettled recovery per webhook, whichever API process asks: the second insert conflicts.
CREATE UNIQUE INDEX recoveries_one_unsettled_per_webhook ON recoveries (webhook_id) WHERE settled_at IS NULL;
CREATE INDEX recoveries_webhook_newest ON recoveries (webhook_id, created_at DESC, id DESC);
-- Finished recoveries are pruned past the retention window (RETENTION_DAYS).
CREATE INDEX recoveries_finished_at ON recoveries (finished_at);

-- A recovery's set, fixed when it starts: the event deliveries it sends again, numbered
-- 1..total oldest first, each copied from the log (which may prune them meanwhile). Each row
-- is also the claim of its one send: `redelivery_id` is written before the POST, and a run
-- that finds it written sends nothing; `outcome` once the send is done. Deleted when the
-- recovery settles.
CREATE TABLE recovery_items (
  recovery_id    text NOT NULL REFERENCES recoveries (id) ON DELETE CASCADE,
  position       integer NOT NULL,
  redelivery_of  text NOT NULL,
  event          text NOT NULL,
  list_id        text NOT NULL,
  cursor         bigint NOT NULL,
  at             timestamptz NOT NULL,
  redelivery_id  text,
  outcome        text CHECK (outcome IN ('delivered', 'failed', 'internal')),
  PRIMARY KEY (recovery_id, position)
);
