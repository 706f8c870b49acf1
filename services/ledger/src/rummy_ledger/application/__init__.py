"""The ledger's use cases, one handler per use case, on domain types: accounts, grants and a
hand's money (:mod:`.accounts`), a match's money (:mod:`.matches`), the reactions to
table-events and the announced grant (:mod:`.reactions`, :mod:`.match_reactions`). Storage and
metrics are reached through the ports of :mod:`.ports` only."""
