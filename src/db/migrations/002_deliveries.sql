-- The delivery log: every event delivery and ping attempted, newest first per webhook.
CREATE TABLE deliveries (
  id            text PRIMARY KEY,
  webhook_id    text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  kind          text NOT NULL CHECK (kind IN ('event', 'ping')),
  event         text NOT NULL,
  list_id       text,
  cursor        bigint,
  at            timestamptz,
  outcome       text NOT NULL CHECK (outcome IN ('delivered', 'failed')),
  status_code   integer,
  error         text,
  duration_ms   integer NOT NULL,
  attempted_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX deliveries_webhook_newest ON deliveries (webhook_id, attempted_at DESC, id DESC);
