-- The log's rows go with their webhook through a trigger rather than a foreign key, whose
-- check cost every logged attempt a lookup and a row lock of its webhook. recordDeliveries
-- is the one writer of the log, and it logs only for webhooks it has locked FOR UPDATE in the
-- same statement: a webhook deleted before it logs nothing, and one deleted meanwhile waits
-- for its commit, after which this trigger's DELETE, a statement of its own, sees its rows.
ALTER TABLE deliveries DROP CONSTRAINT deliveries_webhook_id_fkey;

CREATE FUNCTION delete_webhooks_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM deliveries WHERE webhook_id IN (SELECT id FROM deleted_webhooks);
  RETURN NULL;
END;
$$;
CREATE TRIGGER webhook_deliveries_deleted AFTER DELETE ON webhooks
  REFERENCING OLD TABLE AS deleted_webhooks
  FOR EACH STATEMENT EXECUTE FUNCTION delete_webhooks_deliveries();
