-- Test events (POST /v3/webhooks/{id}/test-events) are logged beside events, pings and
-- redeliveries, as kind 'test'. Every row already satisfies the narrower check, so the new one
-- is added NOT VALID: no scan of the log while the migration holds its lock.
ALTER TABLE deliveries DROP CONSTRAINT deliveries_kind_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_kind_check CHECK (kind IN ('event', 'ping', 'redelivery', 'test')) NOT VALID;
