"""The table's domain (dataclasses, the rules' and the formats' decide/apply; no gRPC, no status
codes): :mod:`.table` (the aggregate: the fold and the hand's decisions, composing the others),
:mod:`.seating` (seats and the dealer button), :mod:`.match_hosting` (when a match table's match
starts, deals, hears the ledger and ends), :mod:`.match_host` (the match's state folded from its
facts and the format's decisions), :mod:`.closing` (closing the table, aborting an overdue hand or
match), :mod:`.facts` (the table-level, match and hand facts it folds and decides: frozen
dataclasses of the rules library's types), :mod:`.errors` (the refusals the application maps to
statuses).

No module of it imports protobuf, a generated message, the envelope or a status, directly or
through another module (the import-linter contracts in ``pyproject.toml``): the application maps
every fact to and from its payload (``rummy_table.application.stream_facts``) and keeps the
payloads a reader is answered from (``rummy_table.application.held_table``)."""
