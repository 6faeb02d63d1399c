-- Records a list write in one round trip (recordListWrite in src/db/list-writes.ts calls it
-- as a statement of its own). The list's row lock serialises the writes to one list; held
-- inside this function it lasts while PostgreSQL runs it, not across a client's round trips
-- and the waits of its event loop. Each statement of a VOLATILE function takes a new
-- snapshot, so the reads after the lock see what its previous holder committed.
--
-- The outcome is 'recorded', 'repeated' (the same write_id and body hash, answered as
-- first recorded), 'write_id_reused' (another body) or 'list_not_found'. The two
-- in_member_change_* arrays are the write's 'member.joined' / 'member.left' changes, in
-- order: the type of each and its account id. recipients: every active webhook of the owner
-- and the members before and after the write whose list_ids allow the list and whose events
-- share a topic with it, as [{webhookId, events}] ordered by id.
CREATE FUNCTION record_list_write(
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
      AND w.status = 'active'
      AND w.events && write_topics
      AND (cardinality(w.list_ids) = 0 OR in_list_id = ANY(w.list_ids)));
  RETURN NEXT;
END;
$$;
