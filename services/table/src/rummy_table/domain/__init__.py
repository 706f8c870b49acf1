"""The table's domain (dataclasses, the rules' and the formats' decide/apply; no gRPC, no status
codes): :mod:`.table` (the aggregate: the fold and the hand's decisions, composing the others),
:mod:`.seating` (seats and the dealer button), :mod:`.match_hosting` (when a match table's match
starts, deals, hears the ledger and ends), :mod:`.match_host` (the match's state folded from its
facts and the format's decisions), :mod:`.closing` (closing the table, aborting an overdue hand or
match), :mod:`.facts` (the table-level and match facts it folds and decides), :mod:`.errors` (the
refusals the application maps to statuses).

Only :mod:`.table` still reads protobuf: a hand's facts and the other services' answers about a
hand are their payloads there (issue 28); every other module imports no wire (the import-linter
contracts in ``pyproject.toml``)."""
