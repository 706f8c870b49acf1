"""The gin family (rulebook "Gin Rummy", "Oklahoma Gin", "Hollywood Gin"): one hand's rules.

``docs/rules/gin.md`` states them. Exact deadwood of ten cards and of eleven (the minimum over
every discard), knock legality, gin and big gin (``arrangement``, on the bitmask search of
``solver``), the defender's best lay-offs and the knocker's arrangement (``layoffs``), the hand's
score, Oklahoma's limit and doubling (``scoring``), the hand's play as a state machine
(``hand``: the first-turn offer, draws, discards, knock, gin, big gin, the wall, timeouts, views)
and the rules-cases hook of the CLI (``cases``). Pure: stdlib only, frozen dataclasses, no I/O,
no randomness.
"""
