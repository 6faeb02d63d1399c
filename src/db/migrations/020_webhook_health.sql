-- Each webhook's health (`health` on the webhook, GET /v3/webhooks/{id}/health): its event
-- deliveries counted per UTC hour by outcome, and when one was last delivered and last failed.
-- Pings, redeliveries and test events are not counted.
--
-- webhook_health_hours: one row per webhook and UTC hour (`hour`, the hour's start) in which an
-- event delivery of it was logged. recordDeliveries (src/db/deliveries.ts) adds to it in the
-- statement that logs the attempts, one row per webhook a batch, from the log rows that
-- statement inserted, so a log row written twice counts once. The API sums the current hour
-- and the 23 before it; the hourly prune-records schedule deletes the rows older than those.
-- A foreign key rather than the log's trigger (migration 015): it is checked only when a
-- webhook's hour is first inserted, once an hour, not for every delivery.
CREATE TABLE webhook_health_hours (
  webhook_id  text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  hour        timestamptz NOT NULL,
  delivered   integer NOT NULL DEFAULT 0,
  failed      integer NOT NULL DEFAULT 0,
  skipped     integer NOT NULL DEFAULT 0,
  PRIMARY KEY (webhook_id, hour)
);
-- The pruning takes the old hours of every webhook at once.
CREATE INDEX webhook_health_hours_hour ON webhook_health_hours (hour);

-- When an event delivery of the webhook was last delivered, and last failed (as attemptedAt in
-- the log), kept however long ago that was; null: none since this migration. Set by the same
-- statement, in the UPDATE of the webhook it already makes. Nullable columns without a default
-- rewrite nothing.
ALTER TABLE webhooks
  ADD COLUMN last_delivered_at timestamptz,
  ADD COLUMN last_failed_at timestamptz;
