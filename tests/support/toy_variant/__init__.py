"""A toy variant that exists only in the test suite, to prove the Variant interface hosts a game
unlike Indian points in every way a host might assume (``toy_variant.game``). Importing it installs
the toy's bundle (``toy_variant.wire.TOY_BUNDLE``: one call) in every host registry."""

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
from .wire import TOY_BUNDLE

TOY_BUNDLE.install()

__all__ = [
    "TOY",
    "TOY_BUNDLE",
    "TOY_NAME",
    "TOY_RULES",
    "Knock",
    "Knocked",
    "ToyOptions",
    "ToyPhase",
    "ToyState",
    "toy_rule_set",
]
