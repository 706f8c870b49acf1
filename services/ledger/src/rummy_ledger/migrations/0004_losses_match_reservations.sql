-- Nobody loses more than was held for them: every 'loss' line of a settlement must match, at
-- commit, a reservation of the same hand and account settled at exactly that amount; and a settled
-- reservation's amount never exceeds what it held (CHECK resolution_shape in 0002). So a loss line
-- can never exceed the seat's reservation, even when inserted with raw SQL.
-- depends: 0003_tracking_outbox_commands

CREATE FUNCTION ledger_loss_matches_reservation() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    tx_kind text;
    tx_hand text;
BEGIN
    SELECT kind, hand_id INTO tx_kind, tx_hand
        FROM journal_transactions WHERE id = NEW.transaction_id;
    IF tx_kind <> 'settlement' THEN
        RAISE EXCEPTION 'a loss line belongs to a settlement, not a %', tx_kind
            USING ERRCODE = 'check_violation';
    END IF;
    IF NOT EXISTS (
        SELECT 1 FROM reservations
        WHERE hand_id = tx_hand AND account_id = NEW.account_id
          AND state = 'settled' AND settled_amount = -NEW.amount
    ) THEN
        RAISE EXCEPTION 'loss of % hundredths for % in hand % matches no reservation settled at that amount',
            -NEW.amount, NEW.account_id, tx_hand USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER journal_losses_match_reservations AFTER INSERT ON journal_entries
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.line_kind = 'loss')
    EXECUTE FUNCTION ledger_loss_matches_reservation();
