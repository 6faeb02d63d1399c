-- failures_reported: event deliveries that failed at the receiver, counted as they are
-- logged (before the per-webhook workflow hears of them). failures_counted: how many of
-- those the per-webhook workflow has counted, mirrored with its state. A success needs to
-- reach the workflow only while the two differ or consecutive_failures is above 0.
ALTER TABLE webhooks
  ADD COLUMN failures_reported bigint NOT NULL DEFAULT 0,
  ADD COLUMN failures_counted bigint NOT NULL DEFAULT 0;
