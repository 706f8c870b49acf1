-- The fairness service's tables (schema "fairness").
--   server_seeds          one secret server seed per hand, its commitment, and when it was revealed;
--   locked_client_seeds   the client seeds exactly as the table locked them (SeedsLocked);
--   stream_versions       the last stream_version written per table stream of fairness-events;
--   consumer_offsets,
--   processed_events      exactly-once handling of table-events (rummy_platform.reactor);
--   outbox                events to publish (rummy_platform.outbox).

CREATE TABLE server_seeds (
    hand_id            text PRIMARY KEY,
    table_id           text NOT NULL,
    server_seed        bytea NOT NULL CHECK (length(server_seed) = 32),
    commitment_sha256  bytea NOT NULL CHECK (length(commitment_sha256) = 32),
    rules_version      text NOT NULL,
    shuffle_version    text NOT NULL,
    committed_at       timestamptz NOT NULL DEFAULT now(),
    revealed_at        timestamptz,
    CHECK (commitment_sha256 = sha256(server_seed))
);

CREATE TABLE locked_client_seeds (
    hand_id      text NOT NULL REFERENCES server_seeds (hand_id),
    seat         integer NOT NULL CHECK (seat >= 0),
    client_seed  bytea NOT NULL,
    PRIMARY KEY (hand_id, seat)
);

CREATE TABLE stream_versions (
    stream_id  text PRIMARY KEY,
    version    bigint NOT NULL CHECK (version >= 1)
);

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
