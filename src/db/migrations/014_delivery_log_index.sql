-- One index for the delivery log instead of four: the newest-first order, with the columns
-- the log's filters (outcome, kind, event) test as trailing keys. A page, filtered or not,
-- and the pruning walk are one range scan of a webhook's entries (at most about 1100, the
-- log being pruned to the newest 1000), and a filter is checked on the index entries, so
-- only the rows it returns are read from the table. A logged attempt updates two indexes
-- (this one and the primary key) rather than five.
DROP INDEX deliveries_webhook_newest;
DROP INDEX deliveries_webhook_outcome;
DROP INDEX deliveries_webhook_kind;
DROP INDEX deliveries_webhook_event;
CREATE INDEX deliveries_webhook_newest ON deliveries (webhook_id, attempted_at DESC, id DESC, outcome, kind, event);
