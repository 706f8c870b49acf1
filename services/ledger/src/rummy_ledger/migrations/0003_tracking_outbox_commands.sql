-- Exactly-once plumbing, written in the same transaction as the ledger's effects:
--   consumer_offsets  the next offset to read per (consumer group, topic, partition);
--   outbox            events to publish, in order (a relay publishes and stamps published_at);
--   command_results   the first result of every command under its idempotency key, with a hash
--                     of its body: a retry with the same body gets the first result back, a retry
--                     with a different body is a conflict.
-- depends: 0002_reservations

CREATE TABLE consumer_offsets (
    consumer_group  text NOT NULL,
    topic           text NOT NULL,
    partition       integer NOT NULL CHECK (partition >= 0),
    next_offset     bigint NOT NULL CHECK (next_offset >= 0),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer_group, topic, partition)
);

CREATE TABLE outbox (
    id            text PRIMARY KEY,
    position      bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    topic         text NOT NULL,
    key           text NOT NULL,
    type          text NOT NULL,
    payload       bytea NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    published_at  timestamptz
);

CREATE INDEX outbox_unpublished ON outbox (position) WHERE published_at IS NULL;

CREATE TABLE command_results (
    key           text PRIMARY KEY,
    command       text NOT NULL,
    request_hash  text NOT NULL,
    result        jsonb,
    created_at    timestamptz NOT NULL DEFAULT now()
);
