-- Signing secrets at rest (docs/operating.md, "Signing-secret keys"): each is sealed with
-- AES-256-GCM under a key of SECRET_KEYS, with the webhook's id as associated data, and kept as
-- the key's id (`secret_key_id`) beside nonce ‖ ciphertext ‖ tag (`secret_sealed`), in
-- `webhooks` and in `registrations` (a registration in flight, whose sealed secret is copied to
-- its webhook as it is: both are sealed for the same webhook id). A registration's two columns
-- are null once it is decided, as its secret was.
--
-- SQL cannot seal: the step that follows this file in the same transaction (sealClearSecrets,
-- src/db/sealed-secrets.ts) seals the secrets stored in clear under the first key, rewrites
-- both tables without them, drops the clear `secret` columns, and makes the webhook's two
-- columns NOT NULL.
ALTER TABLE webhooks
  ADD COLUMN secret_key_id text,
  ADD COLUMN secret_sealed bytea;

ALTER TABLE registrations
  ADD COLUMN secret_key_id text,
  ADD COLUMN secret_sealed bytea,
  ADD CONSTRAINT registrations_sealed_secret_whole CHECK ((secret_key_id IS NULL) = (secret_sealed IS NULL));
