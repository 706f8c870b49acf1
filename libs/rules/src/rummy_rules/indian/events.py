"""Events of Indian rummy that other variants do not have: the declare, the wrong declare and the
drops (first, middle, leaving, timed out). Registered with ``rummy_rules.json_form``."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .. import json_form
from ..cards import Card
from ..events import Event


class DropKind(Enum):
    """Why a seat left the hand without declaring: before its first draw (first drop), after
    (middle drop), leaving the table mid-hand, or too many missed turns in a row
    (``docs/rules/scoring.md#outcomes``)."""

    FIRST = "first"
    MIDDLE = "middle"
    LEAVE = "leave"
    TIMEOUT = "timeout"


@json_form.tag("indian.PlayerDropped")
@dataclass(frozen=True, kw_only=True)
class PlayerDropped(Event):
    """``seat`` is out of the hand during turn ``turn_no`` and is charged ``points``."""

    seat: int
    turn_no: int
    kind: DropKind
    points: int


@json_form.tag("indian.Declared")
@dataclass(frozen=True, kw_only=True)
class Declared(Event):
    """``seat`` laid ``face_down`` aside and showed ``shown`` (13 cards), a valid declaration.
    The hand ends (HandEnded follows)."""

    seat: int
    turn_no: int
    face_down: Card
    shown: tuple[Card, ...]


@json_form.tag("indian.DeclarationRejected")
@dataclass(frozen=True, kw_only=True)
class DeclarationRejected(Event):
    """``seat`` showed ``shown`` but it is not a valid declaration under its best arrangement:
    the seat is out, charged ``points`` (the wrong-declare penalty); play goes on
    (``docs/rules/declaration.md#wrong-declare``)."""

    seat: int
    turn_no: int
    face_down: Card
    shown: tuple[Card, ...]
    points: int


json_form.register(PlayerDropped, Declared, DeclarationRejected)
