-- The trace each delivery attempt was part of (docs/operating.md, "Tracing"): 32 lower-case hex
-- digits, or null when nothing was traced. A nullable column without a default rewrites nothing.
ALTER TABLE deliveries ADD COLUMN trace_id text;
