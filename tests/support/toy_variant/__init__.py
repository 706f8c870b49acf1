"""A toy variant that exists only in the test suite, to prove the Variant interface hosts a game
unlike Indian points in every way a host might assume (``toy_variant.game``)."""

from .game import (
    TOY,
    TOY_NAME,
    TOY_RULES,
    Knock,
    Knocked,
    ToyOptions,
    ToyPhase,
    ToyState,
    toy_rule_set,
)

__all__ = [
    "TOY",
    "TOY_NAME",
    "TOY_RULES",
    "Knock",
    "Knocked",
    "ToyOptions",
    "ToyPhase",
    "ToyState",
    "toy_rule_set",
]
