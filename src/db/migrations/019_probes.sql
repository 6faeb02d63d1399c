-- Probes of a webhook paused by failures (docs/api.md, "Probes"): logged as kind 'probe', and
-- a notice `webhook.reachable` when one is answered with a 2xx. Every row already satisfies the
-- narrower checks, so the new ones are added NOT VALID: no scan while the migration holds its lock.
ALTER TABLE deliveries DROP CONSTRAINT deliveries_kind_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_kind_check CHECK (kind IN ('event', 'ping', 'redelivery', 'test', 'probe')) NOT VALID;
ALTER TABLE notices DROP CONSTRAINT notices_type_check;
ALTER TABLE notices ADD CONSTRAINT notices_type_check CHECK (type IN ('webhook.failing', 'webhook.paused', 'webhook.reachable')) NOT VALID;

-- Where the current pause by failures stands with its probes, as `webhook/{id}` stores it:
-- 'probing', 'reachable' (a probe was answered with a 2xx), 'expired' (PROBE_MAX_DAYS passed);
-- null when the webhook is active, paused by hand, or paused by a release before probes and not
-- yet woken (the workers wake those as they start).
ALTER TABLE webhooks ADD COLUMN probe_state text CHECK (probe_state IN ('probing', 'reachable', 'expired'));
CREATE INDEX webhooks_paused_unprobed ON webhooks (id) WHERE status = 'paused' AND paused_reason = 'auto_failures' AND probe_state IS NULL;
