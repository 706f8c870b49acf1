"""Rummy 500 (rulebook "Rummy 500"; house plan "Rummy 500"): one round's rules.

``docs/rules/rummy500.md`` states them. The rule sets and their options (``rules``: one deck for
2-4 players, two for 5-8, 7 cards or 13 where the stock keeps 12, the low-ace option), the melds
on the table with their stable ids and lay-offs and the cards' values (``melds``), the round's
play as a state machine (``play``: draws, digs into the discard pile, melds, lay-offs, discards,
going out, the empty stock, timeouts, leavers, views) behind the variant interface
(``variant``) and the rules-cases hook of the CLI (``cases``). The match to 500 is the generic
format ``rummy_rules.formats.race_to``. Pure: stdlib only, frozen dataclasses, no I/O, no
randomness.
"""
