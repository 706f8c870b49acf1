"""The dealer's pure domain: a hand's deal and reshuffle from its locked inputs and the seeds
(on ``rummy_rules.shuffle``; no I/O, no clock, no protobuf)."""
