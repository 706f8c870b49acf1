"""The fairness service's outbound adapters: PostgreSQL (:mod:`.db`, the unit of work of
:mod:`.postgres`) and the in-memory fake (:mod:`.memory`). The event log and the outbox relay are
the platform's (``rummy_platform.eventlog``, ``rummy_platform.outbox``), built by bootstrap."""
