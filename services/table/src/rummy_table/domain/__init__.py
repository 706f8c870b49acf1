"""The table's domain (pure: dataclasses, the rules' and the formats' decide/apply; no gRPC, no
status codes): :mod:`.table` (the aggregate: the fold and the hand's decisions, composing the
others), :mod:`.seating` (seats and the dealer button), :mod:`.match_hosting` (a match table's
match), :mod:`.closing` (closing the table, aborting an overdue hand or match), :mod:`.errors`
(the refusals the application maps to statuses)."""
