"""The ledger's outbound adapters: PostgreSQL (:mod:`.db`, the unit of work of :mod:`.postgres`),
the in-memory fake (:mod:`.memory`), the event log and outbox relay (:mod:`.eventlog`) and the
Prometheus series (:mod:`.metrics`)."""
