-- The tables rummy_platform.outbox and rummy_platform.reactor expect, as a service declares them.
CREATE TABLE consumer_offsets (
    consumer_group  text NOT NULL,
    topic           text NOT NULL,
    partition       integer NOT NULL CHECK (partition >= 0),
    next_offset     bigint NOT NULL CHECK (next_offset >= 0),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer_group, topic, partition)
);
CREATE TABLE processed_events (
    consumer_group  text NOT NULL,
    event_id        text NOT NULL,
    processed_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer_group, event_id)
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
-- What a test reactor handler writes.
CREATE TABLE effects (
    event_id  text NOT NULL,
    note      text NOT NULL
);
