-- Receivers behind gateways (docs/api.md, "Receivers behind gateways"): a webhook's credentials
-- for its receiver (static headers or OAuth2 client credentials, and a client certificate) are
-- sealed together, as signing secrets are (022), under a key of SECRET_KEYS with
-- "{webhook id}:credentials" as associated data: `credentials_key_id` beside nonce ‖ ciphertext ‖
-- tag (`credentials_sealed`), both null for a webhook without any. What the API answers of them
-- (the kind, the header names, the token URL and client id, the certificate's subject, expiry
-- and fingerprint) is kept in clear beside them: `auth` and `client_certificate`.
ALTER TABLE webhooks
  ADD COLUMN auth jsonb,
  ADD COLUMN client_certificate jsonb,
  ADD COLUMN credentials_key_id text,
  ADD COLUMN credentials_sealed bytea,
  ADD CONSTRAINT webhooks_sealed_credentials_whole CHECK ((credentials_key_id IS NULL) = (credentials_sealed IS NULL));

-- A registration in flight pings with the credentials the webhook will have: those it sets
-- (`credentials_set`), else the existing webhook's, copied as they are. Null once it is decided.
ALTER TABLE registrations
  ADD COLUMN credentials_set boolean NOT NULL DEFAULT false,
  ADD COLUMN auth jsonb,
  ADD COLUMN client_certificate jsonb,
  ADD COLUMN credentials_key_id text,
  ADD COLUMN credentials_sealed bytea,
  ADD CONSTRAINT registrations_sealed_credentials_whole CHECK ((credentials_key_id IS NULL) = (credentials_sealed IS NULL));
