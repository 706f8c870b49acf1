-- A player's hands and matches (ListMyHands; rummy_ledger.application.history): a read model
-- keyed by account, written in the transaction that applies a settlement (so exactly once with
-- the consumed offset), never read by the money's own checks.
-- depends: 0007_player_limits

-- The variant each table plays (TableOpened.rule_set.variant, else the first HandStarted's):
-- a name only, as the table wrote it; the ledger reads no variant's rules.
CREATE TABLE table_variants (
    table_id    text PRIMARY KEY,
    variant     text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- One row per account per points hand ('hand', ref_id = hand id) or match ('match', ref_id =
-- match id). A match's row adds each game's settlement to net_hundredths while it runs (ended_at
-- NULL: not listed) and is ended by its MatchEnded or MatchAborted. `result` in the settlement's
-- words (a hand: its SeatResult.outcome; a match: won / lost; void, aborted).
CREATE TABLE played (
    id              bigserial PRIMARY KEY,
    account_id      text NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('hand', 'match')),
    ref_id          text NOT NULL,
    table_id        text NOT NULL,
    variant         text NOT NULL,
    format          text NOT NULL,
    result          text,
    net_hundredths  bigint NOT NULL DEFAULT 0,
    ended_at        timestamptz,
    UNIQUE (kind, table_id, ref_id, account_id),
    CHECK ((result IS NULL) = (ended_at IS NULL))
);

-- ListMyHands' keyset: newest first on (ended_at, id).
CREATE INDEX played_by_account ON played (account_id, ended_at DESC, id DESC)
    WHERE ended_at IS NOT NULL;
