"""The fairness service's outbound adapters: PostgreSQL (:mod:`.db`, the unit of work of
:mod:`.postgres`), the in-memory fake (:mod:`.memory`) and the event log and outbox relay
(:mod:`.eventlog`)."""
