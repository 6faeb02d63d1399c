-- What each attempt sent and what came back, and the deliveries skipped while paused.
--
-- request, response: the attempt's request (url, headers as sent, the exact body) and the
-- receiver's response (status, headers kept to 4 KiB, the first 4 KiB of the body as text), as
-- GET /v3/webhooks/{id}/deliveries/{deliveryId} answers them. `json`, not `jsonb`: the headers
-- keep their order. Null where nothing was sent or nothing came back, and in the rows logged
-- before this migration. Pruned with their row, like the rest of it.
ALTER TABLE deliveries ADD COLUMN request json, ADD COLUMN response json;

-- A paused webhook's delivery is logged as 'skipped' (error 'paused'), never sent. The log's
-- outcome index (migration 006) serves the filter outcome=skipped as it serves the others.
ALTER TABLE deliveries DROP CONSTRAINT deliveries_outcome_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_outcome_check CHECK (outcome IN ('delivered', 'failed', 'skipped'));

-- record_list_write (migration 009), but a write's recipients are its webhooks whatever their
-- status: a paused one is planned a delivery too, which its worker logs as skipped. Only
-- the WHERE of `recipients` changes.
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
    recipient_account_ids := seen.account_ids;
  ELSE
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
    INSERT INTO list_writes (list_id, write_id, body_hash, cursor, at, topics, account_ids)
    VALUES (in_list_id, in_write_id, in_body_hash, write_cursor, write_at, write_topics, recipient_account_ids);
  END IF;

  recipients := (
    SELECT coalesce(jsonb_agg(jsonb_build_object('webhookId', w.id, 'events', w.events) ORDER BY w.id), '[]')
    FROM webhooks w
    WHERE w.account_id = ANY(recipient_account_ids)
      AND w.events && write_topics
      AND (cardinality(w.list_ids) = 0 OR in_list_id = ANY(w.list_ids)));
  RETURN NEXT;
END;
$$;
