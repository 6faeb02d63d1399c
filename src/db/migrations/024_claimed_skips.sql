-- Whether a claim found its webhook paused, and so skipped the delivery: a run of the same
-- delivery after its worker died logs it `skipped` again, not as our own failure.
ALTER TABLE delivery_claims ADD COLUMN skipped boolean NOT NULL DEFAULT false;
