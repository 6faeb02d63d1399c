-- Redeliveries are logged beside events and pings, naming the attempt they repeat (kept
-- as plain text: the attempt repeated may since have been pruned from the log).
ALTER TABLE deliveries DROP CONSTRAINT deliveries_kind_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_kind_check CHECK (kind IN ('event', 'ping', 'redelivery'));
ALTER TABLE deliveries ADD COLUMN redelivery_of text;

-- The log's filters (outcome, kind, event): a filtered page is a range of one of these,
-- never a walk through the webhook's whole log for a value it rarely holds.
CREATE INDEX deliveries_webhook_outcome ON deliveries (webhook_id, outcome, attempted_at DESC, id DESC);
CREATE INDEX deliveries_webhook_kind ON deliveries (webhook_id, kind, attempted_at DESC, id DESC);
CREATE INDEX deliveries_webhook_event ON deliveries (webhook_id, event, attempted_at DESC, id DESC);
