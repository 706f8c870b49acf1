-- Reservations: the most a seat can lose in a hand, held before the deal (a pending transfer in
-- TigerBeetle's terms). A reservation is created 'held' and resolves exactly once, to 'settled'
-- (with the amount the settlement actually charged, never more than was held) or 'released';
-- there is no way back and no other change. balances.reserved is the sum of held reservations,
-- kept by the triggers below in the same transaction, so available = balance - reserved is
-- never negative (CHECK available_not_negative on balances).
-- depends: 0001_accounts_and_journal

CREATE TABLE reservations (
    hand_id         text NOT NULL,
    account_id      text NOT NULL REFERENCES accounts (id),
    table_id        text NOT NULL,
    seat            integer NOT NULL CHECK (seat >= 0),
    amount          bigint NOT NULL CHECK (amount >= 0),
    state           text NOT NULL DEFAULT 'held' CHECK (state IN ('held', 'settled', 'released')),
    settled_amount  bigint,
    created_at      timestamptz NOT NULL DEFAULT now(),
    resolved_at     timestamptz,
    PRIMARY KEY (hand_id, account_id),
    UNIQUE (hand_id, seat),
    CONSTRAINT resolution_shape CHECK (
        (state = 'held' AND settled_amount IS NULL AND resolved_at IS NULL)
        OR (state = 'released' AND settled_amount IS NULL AND resolved_at IS NOT NULL)
        OR (state = 'settled' AND settled_amount BETWEEN 0 AND amount AND resolved_at IS NOT NULL)
    )
);

CREATE INDEX reservations_held_by_account ON reservations (account_id) WHERE state = 'held';

CREATE FUNCTION ledger_reservation_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.state <> 'held' THEN
            RAISE EXCEPTION 'a reservation starts held, not %', NEW.state
                USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
    ELSIF TG_OP = 'UPDATE' THEN
        IF OLD.state <> 'held' THEN
            RAISE EXCEPTION 'reservation (%, %) is already %: it resolves exactly once',
                OLD.hand_id, OLD.account_id, OLD.state USING ERRCODE = 'restrict_violation';
        END IF;
        IF NEW.state NOT IN ('settled', 'released') THEN
            RAISE EXCEPTION 'a held reservation resolves to settled or released, not %', NEW.state
                USING ERRCODE = 'check_violation';
        END IF;
        IF (NEW.hand_id, NEW.account_id, NEW.table_id, NEW.seat, NEW.amount, NEW.created_at)
           IS DISTINCT FROM
           (OLD.hand_id, OLD.account_id, OLD.table_id, OLD.seat, OLD.amount, OLD.created_at) THEN
            RAISE EXCEPTION 'only the state of a reservation changes'
                USING ERRCODE = 'restrict_violation';
        END IF;
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'reservations are never deleted' USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER reservations_state_machine BEFORE INSERT OR UPDATE OR DELETE ON reservations
    FOR EACH ROW EXECUTE FUNCTION ledger_reservation_transition();
CREATE TRIGGER reservations_no_truncate BEFORE TRUNCATE ON reservations
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_change();

CREATE FUNCTION ledger_reservation_moves_reserved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE balances SET reserved = reserved + NEW.amount WHERE account_id = NEW.account_id;
    ELSE
        UPDATE balances SET reserved = reserved - OLD.amount WHERE account_id = OLD.account_id;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER reservations_move_reserved AFTER INSERT OR UPDATE ON reservations
    FOR EACH ROW EXECUTE FUNCTION ledger_reservation_moves_reserved();
