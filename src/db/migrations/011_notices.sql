-- Notices: what `webhook/{id}` tells a webhook's owner (webhook.failing at 10 consecutive
-- failures, webhook.paused at the automatic pause), and where they are mailed.
ALTER TABLE accounts ADD COLUMN notification_email text;

-- A notice outlives its webhook (webhook_id is not a foreign key): it says what happened,
-- and is pruned with the rest after RETENTION_DAYS.
-- mail: what became of its mail. 'pending' (its workflow notice/{id} is to be started, or
-- runs), 'sending' (claimed against the account's hourly cap, being sent), 'sent'; or not
-- mailed: 'capped' (over NOTIFY_MAX_PER_HOUR), 'no_address' (no notificationEmail),
-- 'not_configured' (no SMTP_URL).
CREATE TABLE notices (
  id                    text PRIMARY KEY,
  account_id            text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  webhook_id            text NOT NULL,
  type                  text NOT NULL CHECK (type IN ('webhook.failing', 'webhook.paused')),
  url                   text NOT NULL,
  consecutive_failures  integer NOT NULL,
  last_error            text,
  last_status_code      integer,
  created_at            timestamptz NOT NULL DEFAULT now(),
  mail                  text NOT NULL CHECK (mail IN ('pending', 'sending', 'sent', 'capped', 'no_address', 'not_configured')),
  mail_claimed_at       timestamptz,
  emailed_at            timestamptz
);
-- The account's notices, newest first, and filtered by webhook.
CREATE INDEX notices_account_newest ON notices (account_id, created_at DESC, id DESC);
CREATE INDEX notices_webhook_newest ON notices (webhook_id, created_at DESC, id DESC);
-- The notices whose workflow may still have to be started: read at every store of the webhook's state.
CREATE INDEX notices_mail_pending ON notices (webhook_id) WHERE mail = 'pending';
-- The mails an account was sent in the last hour: its cap.
CREATE INDEX notices_mail_claimed ON notices (account_id, mail_claimed_at) WHERE mail_claimed_at IS NOT NULL;
-- Retention.
CREATE INDEX notices_created_at ON notices (created_at);
