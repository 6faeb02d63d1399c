-- One row per event delivery attempt, written before its POST. A delivery run as a local
-- activity can be run again when its workflow task is retried (a worker died before the
-- result was recorded); the second run finds the claim taken and sends nothing.
CREATE TABLE delivery_claims (
  delivery_id  text PRIMARY KEY,
  claimed_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX delivery_claims_claimed_at ON delivery_claims (claimed_at);
