-- Exactly-once commands (the event plumbing -- consumer_offsets, processed_events, outbox,
-- stream_versions -- comes from rummy_platform/migrations/, applied before the ledger's own):
--   command_results   the first result of every command under its idempotency key, with a hash
--                     of its body: a retry with the same body gets the first result back, a retry
--                     with a different body is a conflict.
-- depends: 0002_reservations

CREATE TABLE command_results (
    key           text PRIMARY KEY,
    command       text NOT NULL,
    request_hash  text NOT NULL,
    result        jsonb,
    created_at    timestamptz NOT NULL DEFAULT now()
);
