"""A bot's play: its temperament and randomness around the strategy of the table's variant.

The choices themselves are the variant's own bot strategy (``rummy_rules.bot.VariantBot``, found
through ``rummy_rules.registry`` by the variant's name: ``Variant.bot``), a pure value that picks
one of the moves the table lists for the seat (its view's legal moves: the variant's
``legal_commands``) from what the seat knows (``rummy_rules.bot.Situation``). Nothing here knows
a game's commands, its hand size or how a hand ends. :class:`BotBrain` wraps the strategy with a
seeded ``random.Random`` and a :class:`Temperament` that makes a bot stall (so the clock's
automatic play and the timeouts run) or blunder once in a while.

At a match table (pool, deals, best of N: the table's ``PlayerView.match``, a
``rummy.match.v1.MatchView``) the bot also plays the match, by pure functions of that view:

- **When to give a hand up in a pool** (:func:`pool_drop`; the rulebook's "Pool Rummy" and
  "Dropping", ``docs/rules/formats.md#pool``): a seat's *drop room* is how many more points it can
  take and stay in (target - 1 - its total). When the strategy offers to give a hand up
  (``VariantBot.give_up``: a hopeless hand's first drop), the bot takes it exactly when its price
  (``VariantBot.give_up_points`` for the pool's deals: Indian points' 20 at 101, 25 at 201) fits
  in its drop room: the drop keeps it in for a cheaper price than
  a hopeless hand's count (up to 80). A seat whose room is smaller never drops: the drop would
  eliminate it, while playing on keeps a chance of winning the deal (adding 0). At a pool this
  replaces the temperament's ``give_up`` coin; elsewhere the coin decides as at a points table.
- **Rejoin offers** (:func:`rejoin_answer`): accepted when the bot's :class:`MatchTemperament`
  says so and it can pay the entry (when it knows its balance), declined otherwise.
- **Split** (:func:`asks_split`): at a pool with the split option, the bot asks once (between
  deals) when at most ``MatchTemperament.split_at_seats`` seats are still in (0: never).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from rummy.match.v1 import match_pb2 as match_pb
from rummy_rules import registry
from rummy_rules.bot import Situation, VariantBot
from rummy_rules.commands import Command, Discard, DrawFromDiscardPile, DrawFromStock
from rummy_rules.formats.messages import DealRules
from rummy_rules.formats.pool import POOL_TARGETS


@dataclass(frozen=True)
class Temperament:
    """How a bot misbehaves, as probabilities (0..1).

    ``stall_hand``: per hand, never act at all that hand (the clock plays for it and, after the
    rule set's missed turns, the rules' timeout ruling applies); ``stall_turn``: per turn, let
    that one turn time out; ``blunder``: per turn from the seat's fifth turn on, after drawing,
    play one of the variant's own listed moves that the strategy did not choose (Indian points:
    a declare of a hand that is not valid, a wrong declare); ``give_up``: take the strategy's
    offer to give a hand up (a hopeless hand's drop).
    """

    stall_hand: float = 0.0
    stall_turn: float = 0.0
    blunder: float = 0.0
    give_up: float = 0.5


@dataclass(frozen=True)
class MatchTemperament:
    """How a bot plays a match: ``rejoin``: accept a rejoin offer it can pay for;
    ``split_at_seats``: at a pool with the split option, ask to split once at most this many seats
    are still in (0: never ask)."""

    rejoin: bool = True
    split_at_seats: int = 0


def is_generic(command: Command) -> bool:
    """Whether ``command`` is one of the generic moves (a draw, a discard), sent by their own
    RPCs; any other is the variant's own, sent through ``Play``."""
    return isinstance(command, DrawFromStock | DrawFromDiscardPile | Discard)


@dataclass
class BotBrain:
    """A bot's decisions across hands, reproducible from ``seed``.

    Call :meth:`new_hand` when a hand is dealt and :meth:`choose` on each of its views that lists
    moves for it. Stateful only in the randomness and the per-hand flags; everything it judges
    comes from the arguments.
    """

    seed: int
    temperament: Temperament = field(default_factory=Temperament)
    #: The table's variant (left out: ``rummy_rules.registry.LEGACY_VARIANT``).
    variant: str = registry.LEGACY_VARIANT
    #: How it plays a match (rejoin offers, split requests) at a match table.
    match: MatchTemperament = field(default_factory=MatchTemperament)
    #: The strategy to play instead of the variant's own (e.g. the benchmarks' quicker one of
    #: ``bench/quick_bot.py``); None: the variant's.
    strategy: VariantBot | None = None
    _rng: random.Random = field(init=False, repr=False)
    _play: VariantBot = field(init=False, repr=False)
    _stalling_hand: bool = field(init=False, default=False)
    _stalled_turn: int = field(init=False, default=0)
    _turns: int = field(init=False, default=0)
    _turn_no: int = field(init=False, default=-1)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        play = self.strategy or registry.lookup(self.variant).bot
        if play is None:
            raise ValueError(f"variant {self.variant!r} has no bot strategy")
        self._play = play

    def client_seed(self) -> bytes:
        """32 bytes to contribute to a hand's deal (from the bot's seeded randomness)."""
        return self._rng.randbytes(32)

    def new_hand(self) -> None:
        """Forget the last hand; decide whether this whole hand is stalled."""
        self._turns = 0
        self._turn_no = -1
        self._stalling_hand = self._rng.random() < self.temperament.stall_hand

    def turns(self, turn_no: int) -> int:
        """The seat's turns in this hand so far, counting the turn ``turn_no`` once."""
        if turn_no != self._turn_no:
            self._turn_no = turn_no
            self._turns += 1
        return self._turns

    def choose(
        self,
        situation: Situation,
        legal: Sequence[Command],
        turn_no: int,
        match: match_pb.MatchView | None = None,
    ) -> Command | None:
        """One of ``legal`` (the moves the table lists for the seat at turn ``turn_no``), or
        None to stall (let the turn time out). ``situation.turns`` is replaced by the bot's own
        count. ``match`` (the table's match view): at a pool, whether to take the strategy's
        offer to give the hand up is :func:`pool_drop`'s."""
        if not legal:
            return None
        first_look = turn_no != self._turn_no
        turns = self.turns(turn_no)
        situation = Situation(
            seat=situation.seat,
            cards=situation.cards,
            discard_top=situation.discard_top,
            wild_cut=situation.wild_cut,
            has_drawn=situation.has_drawn,
            taken_from_pile=situation.taken_from_pile,
            turns=turns,
            discard_pile=situation.discard_pile,
        )
        if first_look and (self._stalling_hand or self._rng.random() < self.temperament.stall_turn):
            self._stalled_turn = turn_no
            return None
        if self._stalling_hand or self._stalled_turn == turn_no:
            return None
        if not situation.has_drawn:
            offer = self._play.give_up(situation, legal)
            if offer is not None and offer in legal:
                ruling = pool_drop(match, situation.seat, hopeless=True, bot=self._play)
                coin = self._rng.random() < self.temperament.give_up
                if ruling if ruling is not None else coin:
                    return offer
        chosen = self._play.choose(situation, legal)
        if chosen not in legal:
            raise ValueError(f"the strategy chose {chosen!r}, which is not a legal move")
        if situation.has_drawn and turns >= 5 and self._rng.random() < self.temperament.blunder:
            others = [c for c in legal if not is_generic(c) and c != chosen]
            if others:
                return self._rng.choice(others)
        return chosen


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


def pool_drop(
    view: match_pb.MatchView | None, seat: int, hopeless: bool, bot: VariantBot
) -> bool | None:
    """Whether ``seat`` first-drops a hand at this pool: True for a ``hopeless`` hand when the
    price of giving it up (``bot.give_up_points`` for the pool's deals; Indian points: 20 at 101,
    25 at 201) fits in its :func:`drop_room` (it stays in after it), False otherwise; None when
    the match is not a pool or the strategy names no price (the bot's temperament decides).

    E.g. pool 101: at 60 (room 40) a hopeless hand is dropped (to 80); at 81 (room 19) it is
    played on, since the drop would eliminate the seat."""
    room = drop_room(view, seat)
    target = pool_target(view)
    if room is None or target is None:
        return None
    first_drop = bot.give_up_points(DealRules(kind="pool", target=target))
    if first_drop is None:
        return None
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
