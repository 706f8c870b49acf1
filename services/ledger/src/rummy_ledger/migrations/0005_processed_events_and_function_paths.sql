-- The ledger's trigger functions keep the schema they were created in as their search_path,
-- so they work from any session (an operator's psql with another search_path included).
-- depends: 0004_losses_match_reservations

ALTER FUNCTION ledger_reject_change() SET search_path FROM CURRENT;
ALTER FUNCTION ledger_balances_guard() SET search_path FROM CURRENT;
ALTER FUNCTION ledger_open_balance() SET search_path FROM CURRENT;
ALTER FUNCTION ledger_entry_moves_balance() SET search_path FROM CURRENT;
ALTER FUNCTION ledger_transaction_balanced() SET search_path FROM CURRENT;
ALTER FUNCTION ledger_transaction_has_entries() SET search_path FROM CURRENT;
ALTER FUNCTION ledger_reservation_transition() SET search_path FROM CURRENT;
ALTER FUNCTION ledger_reservation_moves_reserved() SET search_path FROM CURRENT;
ALTER FUNCTION ledger_loss_matches_reservation() SET search_path FROM CURRENT;
