"""The dealer's pure domain: a hand's deal and reshuffle from the table's events and the seeds
(on ``rummy_rules.shuffle``; no I/O, no clock)."""
