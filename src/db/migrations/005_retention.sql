-- Writes and registrations are pruned past the retention window (RETENTION_DAYS) by the
-- prune-records schedule: these keep its deletes from scanning whole tables.
CREATE INDEX list_writes_created_at ON list_writes (created_at);
CREATE INDEX registrations_created_at ON registrations (created_at);
