-- When a registration's ping was claimed, before its POST. A ping run as a local activity
-- can be run again when its workflow task is retried (a worker died before the result was
-- recorded); the second run finds the claim taken and sends nothing.
ALTER TABLE registrations ADD COLUMN ping_claimed_at timestamptz;
