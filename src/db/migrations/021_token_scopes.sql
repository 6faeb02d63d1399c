-- A token's scopes: what it may do (docs/api.md, "Scopes"). Every token made before scopes
-- existed holds all six, and so does one that an API process of an earlier release makes during
-- a rolling upgrade, which names no scopes: the default. (A constant default fills the existing
-- rows without rewriting the table.)
ALTER TABLE account_tokens
  ADD COLUMN scopes text[] NOT NULL
    DEFAULT ARRAY['webhooks:read', 'webhooks:write', 'deliveries:read', 'deliveries:write', 'account:read', 'account:admin']
    CONSTRAINT account_tokens_scopes_check CHECK (
      cardinality(scopes) > 0
      AND scopes <@ ARRAY['webhooks:read', 'webhooks:write', 'deliveries:read', 'deliveries:write', 'account:read', 'account:admin']
    );

-- Every API process keeps the tokens it has checked, their scopes with them, and hears only of
-- a token's deletion (migration 013): a token's scopes are fixed when it is made, so that what a
-- process keeps is always its row's. A token with other scopes is another token.
CREATE FUNCTION refuse_account_token_scopes_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'a token''s scopes are fixed when it is made: make another token and revoke this one';
END;
$$;
CREATE TRIGGER account_token_scopes_fixed BEFORE UPDATE OF scopes ON account_tokens
  FOR EACH ROW WHEN (OLD.scopes IS DISTINCT FROM NEW.scopes) EXECUTE FUNCTION refuse_account_token_scopes_change();
