"""A bot's play: its temperament and randomness around the strategy of the table's variant.

The choices themselves (what to draw, discard, whether to declare or drop) are the variant's own
bot strategy, a pure value of its package found through ``rummy_rules.registry`` by the variant's
name (Indian points: the ``bot`` module of its package). A strategy may also have a
``move_before_draw(hand, top_discard, wild) -> str | None``: the name of a command of the
variant's own to send instead of drawing (made by the variant's wire, ``bot_command``; e.g. a
knock), or None to draw. :class:`BotBrain` wraps it with a seeded
``random.Random`` and a :class:`Temperament` that makes a bot stall (so the clock's automatic play
and the timeout drop run) or declare wrongly once in a while.

At a match table (pool, deals, best of N: the table's ``PlayerView.match``, a
``rummy.match.v1.MatchView``) the bot also plays the match, by pure functions of that view:

- **When to drop in a pool** (:func:`pool_drop`; the rulebook's "Pool Rummy" and "Dropping",
  ``docs/rules/formats.md#pool``): a seat's *drop room* is how many more points it can take and
  stay in (target - 1 - its total). On its first turn a bot drops a hopeless hand (the variant
  strategy's ``is_hopeless``) exactly when the first drop (20 at 101, 25 at 201) fits in its drop
  room: the drop keeps it in for a cheaper price than a hopeless hand's count (up to 80). A seat
  whose room is smaller than the drop never drops: the drop would eliminate it, while playing on
  keeps a chance of winning the deal (adding 0). At a pool this replaces the temperament's
  ``drop_hopeless`` coin; elsewhere the coin decides as at a points table.
- **Rejoin offers** (:func:`rejoin_answer`): accepted when the bot's :class:`MatchTemperament`
  says so and it can pay the entry (when it knows its balance), declined otherwise.
- **Split** (:func:`asks_split`): at a pool with the split option, the bot asks once (between
  deals) when at most ``MatchTemperament.split_at_seats`` seats are still in (0: never).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from rummy.match.v1 import match_pb2 as match_pb
from rummy_rules import registry
from rummy_rules.cards import Card
from rummy_rules.events import DrawSource
from rummy_rules.formats.pool import POOL_TARGETS
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


@dataclass(frozen=True)
class MatchTemperament:
    """How a bot plays a match: ``rejoin``: accept a rejoin offer it can pay for;
    ``split_at_seats``: at a pool with the split option, ask to split once at most this many seats
    are still in (0: never ask)."""

    rejoin: bool = True
    split_at_seats: int = 0


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
    #: How it plays a match (rejoin offers, split requests) at a match table.
    match: MatchTemperament = field(default_factory=MatchTemperament)
    #: The strategy to play instead of the variant's own (same shape: ``choose_draw``,
    #: ``choose_discard``, ``declaration``, ``is_hopeless``; e.g. the benchmarks'
    #: ``QuickIndianBot`` of ``bench/quick_bot.py``); None: the variant's.
    strategy: Any = None
    _rng: random.Random = field(init=False, repr=False)
    _play: Any = field(init=False, repr=False)
    _stalling_hand: bool = field(init=False, default=False)
    _turns: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self._play = self.strategy or registry.lookup(self.variant).bot
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
        self,
        hand: list[Card] | tuple[Card, ...],
        top_discard: Card | None,
        wild: WildRank,
        match: match_pb.MatchView | None = None,
        seat: int | None = None,
    ) -> Move:
        """The first step of a turn: STALL, DROP, PLAY (the variant's own command, when its
        strategy has ``move_before_draw`` and names one) or DRAW (with its source). ``match``
        (the table's match view) and ``seat`` (the bot's): at a pool the drop is
        :func:`pool_drop`'s."""
        self._turns += 1
        if self._stalling_hand or self._rng.random() < self.temperament.stall_turn:
            return Move(Kind.STALL)
        own_move = getattr(self._play, "move_before_draw", None)
        command = own_move(hand, top_discard, wild) if own_move is not None else None
        if command is not None:
            return Move(Kind.PLAY, command=command)
        if self._turns == 1 and self._play.is_hopeless(hand, wild, self.options):
            ruling = pool_drop(match, seat, hopeless=True) if seat is not None else None
            coin = self._rng.random() < self.temperament.drop_hopeless
            if ruling if ruling is not None else coin:
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


# -- the match -----------------------------------------------------------------------------------

#: The names of the match commands a bot sends (``rummy.match.v1``, through ``Play``).
ACCEPT_REJOIN = "AcceptRejoin"
DECLINE_REJOIN = "DeclineRejoin"
REQUEST_SPLIT = "RequestSplit"
_BETWEEN_DEALS = "between_deals"


def _seat_view(view: match_pb.MatchView, seat: int) -> match_pb.MatchSeatView | None:
    return next((s for s in view.seats if s.seat == seat), None)


def pool_target(view: match_pb.MatchView | None) -> int | None:
    """The pool's target (101 or 201) of a ``pool-101`` / ``pool-201`` match, else None."""
    if view is None or not view.match_format.startswith("pool-"):
        return None
    target = view.match_format.removeprefix("pool-")
    return int(target) if target.isdigit() and int(target) in POOL_TARGETS else None


def drop_room(view: match_pb.MatchView | None, seat: int) -> int | None:
    """How many more points ``seat`` can take in this pool and stay in (target - 1 - its total;
    < 0 never: an eliminated seat has 0), or None when the match is not a pool or the seat is
    not in it."""
    target = pool_target(view)
    mine = _seat_view(view, seat) if view is not None else None
    if target is None or mine is None or mine.status != "in":
        return None
    return max(0, target - 1 - mine.total)


def pool_drop(view: match_pb.MatchView | None, seat: int, hopeless: bool) -> bool | None:
    """Whether ``seat`` first-drops a hand at this pool: True for a ``hopeless`` hand when the
    first drop (20 at 101, 25 at 201) fits in its :func:`drop_room` (it stays in after it),
    False otherwise; None when the match is not a pool (the bot's temperament decides).

    E.g. pool 101: at 60 (room 40) a hopeless hand is dropped (to 80); at 81 (room 19) it is
    played on, since the drop would eliminate the seat."""
    room = drop_room(view, seat)
    target = pool_target(view)
    if room is None or target is None:
        return None
    first_drop = POOL_TARGETS[target][0]
    return hopeless and room >= first_drop


def rejoin_answer(
    view: match_pb.MatchView,
    seat: int,
    temperament: MatchTemperament,
    entry_fee_hundredths: int,
    available_hundredths: int | None = None,
) -> str | None:
    """The answer to an open rejoin offer of ``seat`` (:data:`ACCEPT_REJOIN` or
    :data:`DECLINE_REJOIN`), or None when it has none. Accepted when ``temperament.rejoin`` and
    the entry (hundredths) is covered by ``available_hundredths`` (None: not known, assumed)."""
    mine = _seat_view(view, seat)
    if mine is None or not mine.HasField("rejoin_total"):
        return None
    affordable = available_hundredths is None or available_hundredths >= entry_fee_hundredths
    return ACCEPT_REJOIN if temperament.rejoin and affordable else DECLINE_REJOIN


def asks_split(
    view: match_pb.MatchView, seat: int, temperament: MatchTemperament, split_allowed: bool
) -> bool:
    """Whether ``seat`` asks to split now: a pool whose table has the split option
    (``split_allowed``), between deals, the seat still in and not yet asking, and at most
    ``temperament.split_at_seats`` seats in."""
    mine = _seat_view(view, seat)
    if not split_allowed or pool_target(view) is None or view.phase != _BETWEEN_DEALS:
        return False
    if mine is None or mine.status != "in" or mine.asked_split:
        return False
    seats_in = sum(1 for s in view.seats if s.status == "in")
    return 2 <= seats_in <= temperament.split_at_seats


def match_moves(
    view: match_pb.MatchView,
    seat: int,
    options: match_pb.MatchOptions,
    temperament: MatchTemperament,
    available_hundredths: int | None = None,
) -> list[str]:
    """The match commands ``seat`` sends on seeing ``view`` at a table of ``options``: a rejoin
    answer (:func:`rejoin_answer`) and a split request (:func:`asks_split`), in that order."""
    moves: list[str] = []
    pool = options.pool if options.WhichOneof("format") == "pool" else None
    fee = pool.entry_fee_hundredths if pool is not None else 0
    answer = rejoin_answer(view, seat, temperament, fee, available_hundredths)
    if answer is not None:
        moves.append(answer)
    if asks_split(view, seat, temperament, pool is not None and pool.split):
        moves.append(REQUEST_SPLIT)
    return moves
