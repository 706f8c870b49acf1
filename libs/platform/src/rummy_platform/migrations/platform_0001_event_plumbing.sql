-- The event plumbing every PostgreSQL-backed service keeps in its own schema, applied by
-- rummy_platform.db.apply_migrations before the service's own migrations:
--   consumer_offsets  the next offset to read per (consumer group, topic, partition), written in
--                     the transaction of the handled event's effects (rummy_platform.reactor);
--   processed_events  the event ids a reactor handled, so an event republished at a new offset is
--                     dropped by id (PostgresReactor with processed_table='processed_events');
--   outbox            events to publish, in order, written in the transaction of their effects; a
--                     relay appends each row and stamps published_at (rummy_platform.outbox);
--   stream_versions   the last stream_version written per stream, taken in the transaction that
--                     writes the event to the outbox, so versions are dense and never reused
--                     (rummy_platform.outbox.next_stream_version).
-- IF NOT EXISTS only so that a local database migrated before these tables moved here (when each
-- service's own migrations created them, with this same DDL) takes this migration as is.

CREATE TABLE IF NOT EXISTS consumer_offsets (
    consumer_group  text NOT NULL,
    topic           text NOT NULL,
    partition       integer NOT NULL CHECK (partition >= 0),
    next_offset     bigint NOT NULL CHECK (next_offset >= 0),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer_group, topic, partition)
);

CREATE TABLE IF NOT EXISTS processed_events (
    consumer_group  text NOT NULL,
    event_id        text NOT NULL,
    processed_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer_group, event_id)
);

CREATE TABLE IF NOT EXISTS outbox (
    id            text PRIMARY KEY,                           -- the envelope's event_id
    position      bigint GENERATED ALWAYS AS IDENTITY UNIQUE, -- publication order
    topic         text NOT NULL,
    key           text NOT NULL,                              -- the envelope's stream_id
    type          text NOT NULL,                              -- payload type, for people
    payload       bytea NOT NULL,                             -- encoded EventEnvelope bytes
    created_at    timestamptz NOT NULL DEFAULT now(),
    published_at  timestamptz
);

CREATE INDEX IF NOT EXISTS outbox_unpublished ON outbox (position) WHERE published_at IS NULL;

CREATE TABLE IF NOT EXISTS stream_versions (
    stream_id  text PRIMARY KEY,
    version    bigint NOT NULL CHECK (version >= 1)
);
