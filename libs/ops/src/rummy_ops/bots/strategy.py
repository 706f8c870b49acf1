"""A bot's play: its temperament and randomness around the strategy of the table's variant.

The choices themselves (what to draw, discard, whether to declare or drop) are the variant's own
bot strategy, a pure value of its package found through ``rummy_rules.registry`` by the variant's
name (Indian points: the ``bot`` module of its package). A strategy may also have a
``move_before_draw(hand, top_discard, wild) -> str | None``: the name of a command of the
variant's own to send instead of drawing (made by the variant's wire, ``bot_command``; e.g. a
knock), or None to draw. :class:`BotBrain` wraps it with a seeded
``random.Random`` and a :class:`Temperament` that makes a bot stall (so the clock's automatic play
and the timeout drop run) or declare wrongly once in a while.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from rummy_rules import registry
from rummy_rules.cards import Card
from rummy_rules.events import DrawSource
from rummy_rules.melds import DEFAULT_MELD_OPTIONS, MeldOptions
from rummy_rules.wild import WildRank

#: Where a bot draws from (the rules' draw source).
Source = DrawSource


@dataclass(frozen=True)
class Temperament:
    """How a bot misbehaves, as probabilities (0..1).

    ``stall_hand``: per hand, never act at all that hand (the clock plays for it and, after the
    rule set's missed turns, drops it); ``stall_turn``: per turn, let that one turn time out;
    ``wrong_declare``: per turn from the seat's fifth turn on, declare a hand that is not valid;
    ``drop_hopeless``: on a hopeless first hand, drop.
    """

    stall_hand: float = 0.0
    stall_turn: float = 0.0
    wrong_declare: float = 0.0
    drop_hopeless: float = 0.5


class Kind(Enum):
    """What a bot does on its turn."""

    STALL = "stall"
    DROP = "drop"
    DRAW = "draw"
    DISCARD = "discard"
    DECLARE = "declare"
    #: A command of the variant's own (``Move.command`` names it), sent through ``Play``.
    PLAY = "play"


@dataclass(frozen=True)
class Move:
    """One step of a turn: ``source`` for a draw, ``card`` for a discard or the face-down card of
    a declare, ``command`` the strategy's name of the variant's own command for PLAY; ``valid``
    is False for a declare the bot knows is wrong."""

    kind: Kind
    source: Source | None = None
    card: Card | None = None
    valid: bool = True
    command: str | None = None


@dataclass
class BotBrain:
    """A bot's decisions across hands, reproducible from ``seed``.

    Call :meth:`new_hand` when a hand is dealt, :meth:`before_draw` at the start of the bot's turn
    and :meth:`after_draw` with its 14 cards once it has drawn. Stateful only in the randomness and
    the per-hand flags; everything it judges comes from the arguments.
    """

    seed: int
    temperament: Temperament = field(default_factory=Temperament)
    options: MeldOptions = DEFAULT_MELD_OPTIONS
    #: The table's variant (``""``: ``rummy_rules.registry.LEGACY_VARIANT``).
    variant: str = ""
    _rng: random.Random = field(init=False, repr=False)
    _play: Any = field(init=False, repr=False)
    _stalling_hand: bool = field(init=False, default=False)
    _turns: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self._play = registry.lookup(self.variant).bot
        if self._play is None:
            raise ValueError(f"variant {self.variant!r} has no bot strategy")

    def client_seed(self) -> bytes:
        """32 bytes to contribute to a hand's deal (from the bot's seeded randomness)."""
        return self._rng.randbytes(32)

    def new_hand(self) -> None:
        """Forget the last hand; decide whether this whole hand is stalled."""
        self._turns = 0
        self._stalling_hand = self._rng.random() < self.temperament.stall_hand

    def before_draw(
        self, hand: list[Card] | tuple[Card, ...], top_discard: Card | None, wild: WildRank
    ) -> Move:
        """The first step of a turn: STALL, DROP, PLAY (the variant's own command, when its
        strategy has ``move_before_draw`` and names one) or DRAW (with its source)."""
        self._turns += 1
        if self._stalling_hand or self._rng.random() < self.temperament.stall_turn:
            return Move(Kind.STALL)
        own_move = getattr(self._play, "move_before_draw", None)
        command = own_move(hand, top_discard, wild) if own_move is not None else None
        if command is not None:
            return Move(Kind.PLAY, command=command)
        if (
            self._turns == 1
            and self._play.is_hopeless(hand, wild, self.options)
            and self._rng.random() < self.temperament.drop_hopeless
        ):
            return Move(Kind.DROP)
        return Move(Kind.DRAW, source=self._play.choose_draw(hand, top_discard, wild, self.options))

    def after_draw(
        self, hand: list[Card] | tuple[Card, ...], wild: WildRank, taken_from_pile: Card | None
    ) -> Move:
        """The second step with 14 cards: DECLARE (valid, or wrong once in a while) or DISCARD."""
        face_down = self._play.declaration(hand, wild, taken_from_pile, self.options)
        if face_down is not None:
            return Move(Kind.DECLARE, card=face_down)
        discard = self._play.choose_discard(hand, wild, taken_from_pile, self.options)
        if self._turns >= 5 and self._rng.random() < self.temperament.wrong_declare:
            return Move(Kind.DECLARE, card=discard, valid=False)
        return Move(Kind.DISCARD, card=discard)
