-- Responsible play (docs/rules/responsible-play.md; rummy_ledger.domain.limits): the limits each
-- player set for itself, and its net losses per period kept up to date as settlements post (the
-- reservation check reads one row per period, never the journal).
-- depends: 0006_match_money

-- One player's limits in force and its pending changes (rummy_ledger.domain.limits.PlayerLimits
-- as JSON). Written under the lock of the account's balance row, which every reservation and
-- settlement of the account takes too.
CREATE TABLE player_limits (
    account_id  text PRIMARY KEY,
    limits      jsonb NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Net losses (paid minus received, hundredths; negative when the player is up) of each period
-- (day, week, month) starting on a local date in the player's time zone, per account.
CREATE TABLE period_losses (
    account_id            text NOT NULL,
    period                text NOT NULL CHECK (period IN ('day', 'week', 'month')),
    period_start          date NOT NULL,
    net_loss_hundredths   bigint NOT NULL,
    PRIMARY KEY (account_id, period, period_start)
);
