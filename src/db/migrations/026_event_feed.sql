-- The event feed (GET /v3/webhooks/{id}/events): every event delivery a write plans, one row
-- per webhook and topic, written by record_list_write in the statement that records the write.
-- Its delivery id is fixed here, and handed to the write's workflow with its recipients, so that
-- the push's SVC-Delivery and the feed's deliveryId are the same.
--
-- Order: (xid, seq). `xid` is the recording transaction's, `seq` orders a transaction's rows. A
-- reader returns only rows whose transaction is older than every transaction still running
-- (pg_snapshot_xmin of its snapshot): a write that commits later has a larger xid, so what was
-- returned is never overtaken by a row committed after it (src/db/event-feed.ts). Writes to one
-- list take its row lock in turn, and a transaction takes its xid with that lock, so their items
-- follow the list's cursors.
--
-- No foreign key: checking one would lock the webhook's row for each item of every write. A
-- deleted webhook's items go with the retention job (src/db/retention.ts).
CREATE SEQUENCE feed_items_seq CACHE 1000;
CREATE TABLE feed_items (
  webhook_id   text NOT NULL,
  xid          xid8 NOT NULL DEFAULT pg_current_xact_id(),
  seq          bigint NOT NULL DEFAULT nextval('feed_items_seq'),
  delivery_id  text NOT NULL,
  event        text NOT NULL,
  list_id      text NOT NULL,
  cursor       bigint NOT NULL,
  at           timestamptz NOT NULL,
  recorded_at  timestamptz NOT NULL DEFAULT now(),
  -- A page is one range scan of this index: a webhook's rows after a position, in order.
  PRIMARY KEY (webhook_id, xid, seq)
);
ALTER SEQUENCE feed_items_seq OWNED BY feed_items.seq;

-- What a write planned, as record_list_write answered it: a repeat of the write is answered the
-- same, with the same delivery ids. Null for the writes recorded before this migration.
ALTER TABLE list_writes ADD COLUMN recipients jsonb;

-- The event deliveries a write plans: for each webhook of the accounts that may receive it
-- (whatever its status: a paused one's are logged as skipped) whose lists take the list, each
-- topic of the write it subscribes to; by webhook id, then in the write's order of topics.
CREATE FUNCTION planned_deliveries(in_list_id text, in_account_ids text[], in_topics text[])
RETURNS TABLE (webhook_id text, event text, n bigint)
LANGUAGE sql STABLE AS $$
  SELECT w.id, t.topic, t.n
  FROM webhooks w
  CROSS JOIN LATERAL unnest(in_topics) WITH ORDINALITY AS t (topic, n)
  WHERE w.account_id = ANY(in_account_ids)
    AND t.topic = ANY(w.events)
    AND (cardinality(w.list_ids) = 0 OR in_list_id = ANY(w.list_ids))
  ORDER BY w.id, t.n
$$;

-- record_list_write (migration 024), now recording the feed's items with the write. `recipients`
-- is [{webhookId, topics, deliveryIds}] ordered by webhook id, topics and their delivery ids in
-- the same order; a repeat answers what was recorded (a write recorded before this migration:
-- its recipients as they are now, without delivery ids, which its workflow then makes). The
-- commit notifies the channel feed_items with the ids of the webhooks that have new items,
-- comma-separated, or '' when they do not fit a notification: every waiting reader looks.
CREATE OR REPLACE FUNCTION record_list_write(
  in_list_id text,
  in_write_id text,
  in_body_hash bytea,
  in_at timestamptz,
  in_topics text[],
  in_member_change_types text[],
  in_member_change_account_ids text[]
) RETURNS TABLE (outcome text, write_cursor bigint, write_at timestamptz, write_topics text[], recipients jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  list_row lists%ROWTYPE;
  seen list_writes%ROWTYPE;
  members_before text[];
  recipient_account_ids text[];
  notified text;
BEGIN
  SELECT * INTO list_row FROM lists WHERE id = in_list_id FOR UPDATE;
  IF NOT FOUND THEN
    outcome := 'list_not_found';
    RETURN NEXT;
    RETURN;
  END IF;

  SELECT * INTO seen FROM list_writes WHERE list_id = in_list_id AND write_id = in_write_id;
  IF FOUND THEN
    IF seen.body_hash <> in_body_hash THEN
      outcome := 'write_id_reused';
      RETURN NEXT;
      RETURN;
    END IF;
    outcome := 'repeated';
    write_cursor := seen.cursor;
    write_at := seen.at;
    write_topics := seen.topics;
    recipients := coalesce(seen.recipients, (
      SELECT coalesce(jsonb_agg(jsonb_build_object('webhookId', p.webhook_id, 'topics', p.topics) ORDER BY p.webhook_id), '[]')
      FROM (
        SELECT d.webhook_id, array_agg(d.event ORDER BY d.n) AS topics
        FROM planned_deliveries(in_list_id, seen.account_ids, seen.topics) d
        GROUP BY d.webhook_id) p));
    RETURN NEXT;
    RETURN;
  END IF;

  members_before := ARRAY(SELECT account_id FROM list_members WHERE list_id = in_list_id);
  FOR i IN 1 .. coalesce(cardinality(in_member_change_types), 0) LOOP
    IF in_member_change_types[i] = 'member.joined' THEN
      INSERT INTO list_members (list_id, account_id) VALUES (in_list_id, in_member_change_account_ids[i])
      ON CONFLICT DO NOTHING;
    ELSE
      DELETE FROM list_members WHERE list_id = in_list_id AND account_id = in_member_change_account_ids[i];
    END IF;
  END LOOP;
  recipient_account_ids := ARRAY(
    SELECT list_row.owner_account_id
    UNION SELECT unnest(members_before)
    UNION SELECT account_id FROM list_members WHERE list_id = in_list_id);

  outcome := 'recorded';
  write_cursor := list_row.cursor + 1;
  write_at := in_at;
  write_topics := in_topics;
  UPDATE lists SET cursor = write_cursor, updated_at = now() WHERE id = in_list_id;

  -- The delivery ids in the form of the service's others: dlv_ and 24 hex digits.
  WITH planned AS (
    INSERT INTO feed_items (webhook_id, delivery_id, event, list_id, cursor, at)
    SELECT d.webhook_id, 'dlv_' || left(replace(gen_random_uuid()::text, '-', ''), 24), d.event, in_list_id, write_cursor, write_at
    FROM planned_deliveries(in_list_id, recipient_account_ids, write_topics) d
    ORDER BY d.webhook_id, d.n
    RETURNING webhook_id, seq, event, delivery_id)
  SELECT
    coalesce(jsonb_agg(jsonb_build_object('webhookId', p.webhook_id, 'topics', p.topics, 'deliveryIds', p.ids) ORDER BY p.webhook_id), '[]'),
    string_agg(p.webhook_id, ',')
  INTO recipients, notified
  FROM (
    SELECT webhook_id, array_agg(event ORDER BY seq) AS topics, array_agg(delivery_id ORDER BY seq) AS ids
    FROM planned GROUP BY webhook_id) p;

  INSERT INTO list_writes (list_id, write_id, body_hash, cursor, at, topics, account_ids, recipients)
  VALUES (in_list_id, in_write_id, in_body_hash, write_cursor, write_at, write_topics, recipient_account_ids, recipients);
  -- A notification's payload holds less than 8000 bytes.
  IF notified IS NOT NULL THEN
    PERFORM pg_notify('feed_items', CASE WHEN length(notified) < 7900 THEN notified ELSE '' END);
  END IF;
  RETURN NEXT;
END;
$$;

-- The retention job's walk of a deleted webhook's items and of the old ones (src/db/retention.ts):
-- a BRIN index costs a write next to nothing, and rows come in roughly in time order.
CREATE INDEX feed_items_recorded_at ON feed_items USING brin (recorded_at);
