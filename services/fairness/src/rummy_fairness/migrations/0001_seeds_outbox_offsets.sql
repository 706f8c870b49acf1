-- The fairness service's tables (schema "fairness").
--   server_seeds          one secret server seed per hand, its commitment, and when it was revealed;
--   locked_client_seeds   the client seeds exactly as the table locked them (SeedsLocked).
-- The event plumbing (consumer_offsets, processed_events, outbox, stream_versions) comes from
-- rummy_platform/migrations/, applied first.

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
