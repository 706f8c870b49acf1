"""Commands of Indian rummy that other variants do not have: declare and drop."""

from __future__ import annotations

from dataclasses import dataclass

from .. import json_form
from ..cards import Card
from ..commands import Command


@json_form.tag("indian.Declare")
@dataclass(frozen=True, kw_only=True)
class Declare(Command):
    """Holding one card more than a hand (14 at 13-card rummy), lay ``face_down`` aside and show
    the rest (``docs/rules/declaration.md#declaring``). The server judges the shown cards under
    their best arrangement; a client's grouping is not part of the command. A card taken from the
    discard pile this turn cannot be the one laid face down (when the rule set forbids discarding
    it)."""

    seat: int
    turn_no: int
    face_down: Card
    at_ms: int


@json_form.tag("indian.Drop")
@dataclass(frozen=True, kw_only=True)
class Drop(Command):
    """Leave the hand on one's turn, before drawing: a first drop if the seat has not drawn yet in
    this hand, else a middle drop (``docs/rules/scoring.md#drops``)."""

    seat: int
    turn_no: int
    at_ms: int


json_form.register(Declare, Drop)
