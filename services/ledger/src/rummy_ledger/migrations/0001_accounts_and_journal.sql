-- Accounts, balances and the append-only double-entry journal.
-- Amounts are bigint hundredths of a House Token. The database itself enforces:
--   * the journal (transactions and entries) and the accounts are append-only;
--   * every journal transaction has at least two entries and sums to zero (checked at commit);
--   * balances move only through journal entries (and reservations, migration 0002), and no
--     account but issuance goes below zero (CHECK constraints on balances).

CREATE TABLE accounts (
    id          text PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 200),
    kind        text NOT NULL CHECK (kind IN ('player', 'house', 'issuance')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (id, kind),
    CONSTRAINT player_ids_are_not_house_ids CHECK (kind <> 'player' OR id NOT LIKE 'house:%')
);

-- One row per account, created with the account and moved only by the triggers below.
CREATE TABLE balances (
    account_id  text PRIMARY KEY,
    kind        text NOT NULL,
    balance     bigint NOT NULL DEFAULT 0,
    reserved    bigint NOT NULL DEFAULT 0,
    FOREIGN KEY (account_id, kind) REFERENCES accounts (id, kind),
    CONSTRAINT reserved_not_negative CHECK (reserved >= 0),
    CONSTRAINT balance_not_negative CHECK (kind = 'issuance' OR balance >= 0),
    CONSTRAINT available_not_negative CHECK (kind = 'issuance' OR balance - reserved >= 0)
);

CREATE TABLE journal_transactions (
    id          text PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 300),
    seq         bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    kind        text NOT NULL CHECK (kind IN ('grant', 'settlement')),
    hand_id     text,
    table_id    text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    metadata    jsonb NOT NULL DEFAULT '{}'::jsonb,
    CONSTRAINT settlement_names_its_hand
        CHECK (kind <> 'settlement' OR (hand_id IS NOT NULL AND table_id IS NOT NULL))
);

-- A hand is settled at most once, whatever the transaction id.
CREATE UNIQUE INDEX journal_one_settlement_per_hand
    ON journal_transactions (hand_id) WHERE kind = 'settlement';

CREATE TABLE journal_entries (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    transaction_id  text NOT NULL REFERENCES journal_transactions (id),
    account_id      text NOT NULL REFERENCES accounts (id),
    amount          bigint NOT NULL,
    line_kind       text NOT NULL
        CHECK (line_kind IN ('issuance', 'grant', 'loss', 'win', 'commission')),
    seat            integer CHECK (seat >= 0),
    points          integer CHECK (points >= 0)
);

CREATE INDEX journal_entries_by_transaction ON journal_entries (transaction_id);
CREATE INDEX journal_entries_by_account ON journal_entries (account_id, transaction_id);

-- Append-only: no UPDATE, DELETE or TRUNCATE on the journal or the accounts.
CREATE FUNCTION ledger_reject_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % rejected', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER accounts_append_only BEFORE UPDATE OR DELETE ON accounts
    FOR EACH ROW EXECUTE FUNCTION ledger_reject_change();
CREATE TRIGGER accounts_no_truncate BEFORE TRUNCATE ON accounts
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_change();
CREATE TRIGGER journal_transactions_append_only BEFORE UPDATE OR DELETE ON journal_transactions
    FOR EACH ROW EXECUTE FUNCTION ledger_reject_change();
CREATE TRIGGER journal_transactions_no_truncate BEFORE TRUNCATE ON journal_transactions
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_change();
CREATE TRIGGER journal_entries_append_only BEFORE UPDATE OR DELETE ON journal_entries
    FOR EACH ROW EXECUTE FUNCTION ledger_reject_change();
CREATE TRIGGER journal_entries_no_truncate BEFORE TRUNCATE ON journal_entries
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_change();
CREATE TRIGGER balances_no_truncate BEFORE TRUNCATE ON balances
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_change();

-- Balances are written only from inside the ledger's own triggers (trigger depth >= 2), never
-- directly: a raw UPDATE of a balance is rejected.
CREATE FUNCTION ledger_balances_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF pg_trigger_depth() < 2 THEN
        RAISE EXCEPTION 'balances move only through journal entries and reservations: direct % rejected', TG_OP
            USING ERRCODE = 'restrict_violation';
    END IF;
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'balances are never deleted' USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER balances_guard BEFORE INSERT OR UPDATE OR DELETE ON balances
    FOR EACH ROW EXECUTE FUNCTION ledger_balances_guard();

CREATE FUNCTION ledger_open_balance() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO balances (account_id, kind) VALUES (NEW.id, NEW.kind);
    RETURN NULL;
END;
$$;

CREATE TRIGGER accounts_open_balance AFTER INSERT ON accounts
    FOR EACH ROW EXECUTE FUNCTION ledger_open_balance();

-- Each entry moves its account's balance in the same statement; the CHECKs on balances fire there.
CREATE FUNCTION ledger_entry_moves_balance() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE balances SET balance = balance + NEW.amount WHERE account_id = NEW.account_id;
    RETURN NULL;
END;
$$;

CREATE TRIGGER journal_entries_move_balance AFTER INSERT ON journal_entries
    FOR EACH ROW EXECUTE FUNCTION ledger_entry_moves_balance();

-- Every journal transaction sums to zero: checked at commit, whoever inserted the rows.
CREATE FUNCTION ledger_transaction_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    total numeric;
BEGIN
    SELECT coalesce(sum(amount), 0) INTO total
        FROM journal_entries WHERE transaction_id = NEW.transaction_id;
    IF total <> 0 THEN
        RAISE EXCEPTION 'journal transaction % does not sum to zero (sum %)', NEW.transaction_id, total
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER journal_entries_sum_to_zero AFTER INSERT ON journal_entries
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION ledger_transaction_balanced();

-- A journal transaction has at least two entries (a debit and a credit): checked at commit.
CREATE FUNCTION ledger_transaction_has_entries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT count(*) FROM journal_entries WHERE transaction_id = NEW.id) < 2 THEN
        RAISE EXCEPTION 'journal transaction % has fewer than two entries', NEW.id
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER journal_transactions_have_entries AFTER INSERT ON journal_transactions
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION ledger_transaction_has_entries();

-- The two house accounts exist from the start.
INSERT INTO accounts (id, kind) VALUES ('house:issuance', 'issuance'), ('house:commission', 'house');
