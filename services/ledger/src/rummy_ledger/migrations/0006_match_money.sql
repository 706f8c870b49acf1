-- Match money (rummy.match.v1; docs/rules/formats.md#money). The holds of a match are
-- reservations like a hand's (one group per batch: hand_id = the covering settlement's key, a
-- colon, the purpose; rummy_ledger.matches.hold_group), so balances.reserved, the gauges and the
-- invariant scans cover them. A match's settlement is a 'settlement' journal transaction whose
-- hand_id is its key (rummy_ledger.matches.settlement_key), posted with two new line kinds:
-- 'forfeit' (a seat pays from what it held) and 'prize' (a seat receives or breaks even).
-- depends: 0005_processed_events_and_function_paths

-- The rate of each table hosting a match format (TableOpened.commission_bps).
CREATE TABLE match_tables (
    table_id        text PRIMARY KEY,
    commission_bps  integer NOT NULL CHECK (commission_bps BETWEEN 0 AND 10000),
    created_at      timestamptz NOT NULL DEFAULT now()
);

-- What the ledger remembers of a match: seats' accounts, games' seats, hold batches and their
-- outcomes, settlements' outcomes (rummy_ledger.matches.MatchBook as JSON).
CREATE TABLE matches (
    table_id    text NOT NULL,
    match_id    text NOT NULL,
    book        jsonb NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, match_id)
);

ALTER TABLE journal_entries DROP CONSTRAINT journal_entries_line_kind_check;
ALTER TABLE journal_entries ADD CONSTRAINT journal_entries_line_kind_check
    CHECK (line_kind IN ('issuance', 'grant', 'loss', 'win', 'commission', 'forfeit', 'prize'));

-- Nobody pays beyond what it held for a match: every 'forfeit' line must equal, at commit, what
-- the account's reservations in the groups its settlement covers (hand_id = the transaction's
-- hand_id || ':' || purpose, same table) were settled at; settled amounts never exceed what was
-- held (CHECK resolution_shape). A 'prize' line is never negative.
CREATE FUNCTION ledger_forfeit_matches_holds() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    tx_kind text;
    tx_hand text;
    tx_table text;
    settled numeric;
BEGIN
    SELECT kind, hand_id, table_id INTO tx_kind, tx_hand, tx_table
        FROM journal_transactions WHERE id = NEW.transaction_id;
    IF NEW.line_kind = 'prize' THEN
        IF NEW.amount < 0 OR tx_kind <> 'settlement' THEN
            RAISE EXCEPTION 'a prize line is a settlement''s and never negative (% hundredths)',
                NEW.amount USING ERRCODE = 'check_violation';
        END IF;
        RETURN NULL;
    END IF;
    IF tx_kind <> 'settlement' THEN
        RAISE EXCEPTION 'a forfeit line belongs to a settlement, not a %', tx_kind
            USING ERRCODE = 'check_violation';
    END IF;
    SELECT coalesce(sum(settled_amount), 0) INTO settled FROM reservations
        WHERE left(hand_id, length(tx_hand) + 1) = tx_hand || ':'
          AND table_id = tx_table AND account_id = NEW.account_id AND state = 'settled';
    IF NEW.amount >= 0 OR settled <> -NEW.amount THEN
        RAISE EXCEPTION 'forfeit of % hundredths for % in % matches no holds settled at that amount (%)',
            -NEW.amount, NEW.account_id, tx_hand, settled USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END;
$$;
ALTER FUNCTION ledger_forfeit_matches_holds() SET search_path FROM CURRENT;

CREATE CONSTRAINT TRIGGER journal_forfeits_match_holds AFTER INSERT ON journal_entries
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.line_kind IN ('forfeit', 'prize'))
    EXECUTE FUNCTION ledger_forfeit_matches_holds();
