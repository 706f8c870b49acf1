-- The last stream_version the ledger wrote per stream of ledger-events (a table id for events
-- about a hand, an account id for TokensGranted), taken in the transaction that writes the event
-- to the outbox, so versions are dense and never reused.
-- depends: 0005_processed_events_and_function_paths

CREATE TABLE stream_versions (
    stream_id  text PRIMARY KEY,
    version    bigint NOT NULL CHECK (version >= 1)
);
