"""A test player that controls every seat of a Rummy 500 table and plans each round.

As ``gin_planner`` does for gin: with the fairness service's test-only seed key
(``RUMMY_FAIRNESS_SEED_KEY``) the server seed of hand ``h`` is HMAC-SHA256(key, ``h``); the test
contributes every client seed, so it knows the whole deck before the deal and recomputes it with
the product's shuffle (``rummy_rules.shuffle.deal``, the layout of
``docs/rules/shuffle-spec.md#rummy500-deal``: seven each one at a time from the seat after the
dealer, the upcard, the rest the stock). :func:`plan_round` then plays the round out in its own
simulation (:func:`playout`: each seat digs the pile when the deepest card taken makes a meld at
once, else draws the stock's top; melds what it can, lays off what fits, goes out with
``GoOut`` when nothing is left, else discards a card chosen at random), trying playouts and
other client seeds until a round satisfies what the test asks of it (a dig five deep, a lay-off
onto another seat's run, a going out without a discard, a tie at the top, ...).

The simulation's rules and scores are this module's own and share no code with the rules under
test (``rummy_rules.rummy500``): :func:`kind_of` (a set of three or four of a rank, a run of
three or more of a suit with the ace low or high, not both, no wrap), :func:`melds_within`
(every set and run by brute force), :func:`best_melds` (a search over disjoint melds),
:func:`value` (ace 15, J/Q/K 10, others face value) and the round score (melded and laid-off
cards minus cards in hand, ``docs/rules/rummy500.md#scores``). The services' scores must equal
them.

Cards are canonical indices 0..51 (clubs, diamonds, hearts, spades; ace to king).
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import combinations

from gin_planner import face, rank, seeds_and_deal, server_seed, suit, turn_view, wire
from google.protobuf.message import Message

from rummy.common.v1 import cards_pb2
from rummy.rummy500.v1 import events_pb2 as rpb
from rummy.table.v1 import events_pb2 as table_events
from rummy.table.v1 import table_service_pb2 as api
from rummy_rules.rummy500.rules import HAND_SIZE, ONE_DECK, Rummy500Options
from rummy_rules.shuffle import ShuffleInputs, deal
from rummy_testing.players import Player

Cards = frozenset[int]
STOCK = table_events.DRAW_SOURCE_STOCK
SET, RUN = "set", "run"
#: The dig the match's first round must make.
DIG_DEPTH = 5
#: The deepest dig a playout looks at otherwise.
MAX_DIG = 10
#: How far below the target both leaders must be for a round to try to tie them over it.
TIE_REACH = 170


def value(card: int) -> int:
    """Ace 15, J/Q/K 10, others face value (``docs/rules/rummy500.md#scores``)."""
    r = rank(card)
    return 15 if r == 1 else min(r, 10)


def points(cards: Iterable[int]) -> int:
    return sum(value(c) for c in cards)


# -- the evaluator (docs/rules/rummy500.md#melds, #lay-offs), independent of rummy_rules ----------


def kind_of(cards: Iterable[int]) -> str | None:
    """``set`` (3 or 4 of one rank), ``run`` (3+ of one suit on consecutive ranks, the ace 1 or
    14, not both; no wrap) or None."""
    return _kind(frozenset(cards))


@lru_cache(maxsize=200_000)
def _kind(cards: Cards) -> str | None:
    group = sorted(cards)
    if len(group) < 3:
        return None
    if len({rank(c) for c in group}) == 1:
        return SET if len(group) <= 4 else None
    if len({suit(c) for c in group}) != 1:
        return None
    for ace in (1, 14):
        places = sorted(ace if rank(c) == 1 else rank(c) for c in group)
        if places == list(range(places[0], places[0] + len(places))):
            return RUN
    return None


def melds_within(cards: Iterable[int]) -> list[Cards]:
    """Every set and run ``cards`` hold (sub-runs included)."""
    return list(_melds(frozenset(cards)))


@lru_cache(maxsize=200_000)
def _melds(held: Cards) -> tuple[Cards, ...]:
    found: list[Cards] = []
    by_rank: dict[int, list[int]] = {}
    for c in sorted(held):
        by_rank.setdefault(rank(c), []).append(c)
    for same in by_rank.values():
        for size in (3, 4):
            found.extend(frozenset(m) for m in combinations(same, size))
    for s in {suit(c) for c in held}:
        at = {p: s * 13 + (p - 1) % 13 for p in range(1, 15)}
        for low in range(1, 13):
            if at[low] not in held:
                continue
            run: list[int] = []
            for p in range(low, 15):
                if at[p] not in held or at[p] in run:
                    break
                run.append(at[p])
                if len(run) >= 3:
                    found.append(frozenset(run))
    return tuple(found)


@lru_cache(maxsize=200_000)
def best_melds(cards: Cards) -> tuple[int, tuple[Cards, ...]]:
    """The most points ``cards`` can meld in disjoint melds, and those melds."""
    if not cards:
        return 0, ()
    first = min(cards)
    best = best_melds(cards - {first})
    for meld in melds_within(cards):
        if first in meld:
            got, rest = best_melds(cards - meld)
            if got + points(meld) > best[0]:
                best = (got + points(meld), (meld, *rest))
    return best


# -- the deal -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dealt:
    """A round as the dealer deals it: ``order`` the seats in turn order (the seat after the
    dealer first), each seat's seven, the upcard, the stock (top first)."""

    order: tuple[int, ...]
    hands: dict[int, Cards]
    upcard: int
    stock: tuple[int, ...]


def dealt(seed: bytes, hand_id: str, seeds: dict[int, bytes], dealer: int) -> Dealt:
    """The deal of ``hand_id`` from the server seed and the client seeds by seat."""
    inputs = ShuffleInputs(seed, hand_id, tuple(sorted(seeds.items())))
    out = deal(inputs, ONE_DECK, sorted(seeds), dealer, HAND_SIZE, Rummy500Options.deal_shape)
    assert out.first_open is not None
    seats = sorted(seeds)
    k = seats.index(dealer) + 1
    return Dealt(
        order=tuple(seats[k:] + seats[:k]),
        hands={h.seat: frozenset(ONE_DECK.card_to_index(c) for c in h.cards) for h in out.hands},
        upcard=ONE_DECK.card_to_index(out.first_open),
        stock=tuple(ONE_DECK.card_to_index(c) for c in out.stock),
    )


# -- the round's simulation -------------------------------------------------------------------


@dataclass
class TableMeld:
    meld_id: int
    owner: int
    kind: str
    cards: list[int]
    layoffs: list[tuple[int, int]] = field(default_factory=list)  # (card, seat)

    def all_cards(self) -> list[int]:
        return [*self.cards, *(c for c, _ in self.layoffs)]

    def takes(self, card: int) -> bool:
        return kind_of([*self.all_cards(), card]) == self.kind


@dataclass(frozen=True)
class Move:
    """One call by ``seat`` in turn ``turn_no``: ``kind`` draw (``card`` expected), dig
    (``depth``, ``cards`` taken expected bottom first, ``meld`` the deepest card's), meld
    (``groups``), lay_off (``card`` onto ``meld_id``), go_out (``groups`` and ``layoffs``),
    discard (``card``) or nothing (a draw from the empty stock)."""

    seat: int
    turn_no: int
    kind: str
    card: int | None = None
    depth: int = 0
    cards: tuple[int, ...] = ()
    meld: tuple[int, ...] = ()
    meld_id: int = 0
    groups: tuple[tuple[int, ...], ...] = ()
    layoffs: tuple[tuple[int, int], ...] = ()


@dataclass
class Round:
    """A round played out: its moves, how it ended (``went_out`` by ``out_seat`` or
    ``stock_empty``; ``discarded_out``: the last card went by a discard), the melds on the
    table, every seat's hand at the end, and what happened that the test may ask for."""

    deal: Dealt
    moves: list[Move]
    reason: str
    out_seat: int | None
    discarded_out: bool
    melds: list[TableMeld]
    hands: dict[int, list[int]]
    digs: list[int]  # the depth of every dig
    foreign_run_layoffs: list[tuple[int, int, int]]  # (seat, card, meld id) onto another's run
    dig_turn: int = 0  # the turn of the first dig DIG_DEPTH deep
    pile_at_dig: tuple[int, ...] = ()
    hand_at_dig: tuple[int, ...] = ()
    seeds: dict[int, bytes] = field(default_factory=dict)

    def table_points(self, seat: int) -> int:
        own = sum(points(m.cards) for m in self.melds if m.owner == seat)
        laid = sum(value(c) for m in self.melds for c, s in m.layoffs if s == seat)
        return own + laid

    def hand_points(self, seat: int) -> int:
        return points(self.hands[seat])

    def score(self, seat: int) -> int:
        return self.table_points(seat) - self.hand_points(seat)

    def scores(self) -> dict[int, int]:
        return {s: self.score(s) for s in self.deal.order}


def _dig_meld(hand: Sequence[int], taken: Sequence[int]) -> Cards | None:
    """The largest meld of ``hand`` and ``taken`` holding the deepest card taken."""
    deepest = taken[0]
    near = [c for c in (*hand, *taken) if rank(c) == rank(deepest) or suit(c) == suit(deepest)]
    options = [m for m in melds_within(near) if deepest in m]
    return max(options, key=lambda m: (len(m), points(m), sorted(m))) if options else None


def playout(d: Dealt, rng: random.Random, *, want_dig: bool, dig_chance: float) -> Round:
    """One way the round can go (see the module); ``want_dig``: dig :data:`DIG_DEPTH` deep the
    first time that makes a meld; ``dig_chance``: how often another possible dig is made."""
    hands = {s: list(h) for s, h in d.hands.items()}
    stock = list(d.stock)
    pile = [d.upcard]
    melds: list[TableMeld] = []
    moves: list[Move] = []
    digs: list[int] = []
    foreign: list[tuple[int, int, int]] = []
    out = Round(d, moves, "", None, False, melds, hands, digs, foreign)
    order = d.order
    for turn_no in range(1, 200):
        seat = order[(turn_no - 1) % len(order)]
        hand = hands[seat]
        groups: list[tuple[int, ...]] = []
        layoffs: list[tuple[int, int]] = []
        # Draw or dig.
        chosen = None
        if want_dig and not out.dig_turn and len(pile) >= DIG_DEPTH:
            meld = _dig_meld(hand, pile[-DIG_DEPTH:])
            chosen = None if meld is None else (DIG_DEPTH, meld)
        if chosen is None and rng.random() < dig_chance:
            possible = []
            for depth in range(1, min(len(pile), MAX_DIG) + 1):
                meld = _dig_meld(hand, pile[-depth:])
                if meld is not None:
                    possible.append((depth, meld))
            chosen = rng.choice(possible) if possible else None
        if chosen is not None:
            depth, meld = chosen
            taken = tuple(pile[-depth:])
            if depth == DIG_DEPTH and not out.dig_turn:
                out.dig_turn, out.pile_at_dig, out.hand_at_dig = turn_no, tuple(pile), tuple(hand)
            del pile[-depth:]
            hand.extend(taken)
            ordered = tuple(sorted(meld))
            for c in meld:
                hand.remove(c)
            melds.append(TableMeld(len(melds) + 1, seat, kind_of(meld) or "", list(ordered)))
            digs.append(depth)
            moves.append(Move(seat, turn_no, "dig", depth=depth, cards=taken, meld=ordered))
            if not hand:
                out.reason, out.out_seat = "went_out", seat
                return out
        elif stock:
            card = stock.pop(0)
            hand.append(card)
            moves.append(Move(seat, turn_no, "draw", card=card))
        else:
            moves.append(Move(seat, turn_no, "nothing"))
            out.reason = "stock_empty"
            return out
        # Meld what the hand can, then lay off what fits.
        _, found = best_melds(frozenset(hand))
        for meld in found:
            ordered = tuple(sorted(meld))
            groups.append(ordered)
            for c in meld:
                hand.remove(c)
            melds.append(TableMeld(len(melds) + 1, seat, kind_of(meld) or "", list(ordered)))
        laid = True
        while laid:
            laid = False
            for c in sorted(hand):
                targets = [m for m in melds if m.takes(c)]
                if not targets:
                    continue
                theirs = [m for m in targets if m.owner != seat and m.kind == RUN]
                target = theirs[0] if theirs else rng.choice(targets)
                target.layoffs.append((c, seat))
                hand.remove(c)
                layoffs.append((c, target.meld_id))
                if target.owner != seat and target.kind == RUN:
                    foreign.append((seat, c, target.meld_id))
                laid = True
                break
        if not hand:
            moves.append(
                Move(seat, turn_no, "go_out", groups=tuple(groups), layoffs=tuple(layoffs))
            )
            out.reason, out.out_seat = "went_out", seat
            return out
        if groups:
            moves.append(Move(seat, turn_no, "meld", groups=tuple(groups)))
        for c, meld_id in layoffs:
            moves.append(Move(seat, turn_no, "lay_off", card=c, meld_id=meld_id))
        discard = rng.choice(sorted(hand))
        hand.remove(discard)
        pile.append(discard)
        moves.append(Move(seat, turn_no, "discard", card=discard))
        if not hand:
            out.reason, out.out_seat, out.discarded_out = "went_out", seat, True
            return out
    raise AssertionError("a round of 200 turns")


def plan_round(
    key: bytes,
    hand_id: str,
    dealer: int,
    seats: Sequence[int],
    accept: Callable[[Round], bool],
    *,
    prefer: Callable[[Round], float] = lambda _r: 0.0,
    want_dig: bool = False,
    attempts: int = 400,
    playouts: int = 12,
    budget_seconds: float = 20.0,
    deadline_seconds: float = 40.0,
) -> Round:
    """A round for ``hand_id`` (dealt by ``dealer`` to ``seats``) that ``accept`` takes:
    client seeds tried in a fixed order, a few playouts of each deal; of the rounds accepted
    within ``budget_seconds`` (at least one), the one ``prefer`` rates highest. Only rounds some
    seat goes out of are taken: a draw from the empty stock ends a round, but its DrawCard is
    answered FAILED_PRECONDITION (it has no card to return). Raises AssertionError when none is
    accepted after ``attempts`` deals or ``deadline_seconds``."""
    seed = server_seed(key, hand_id)
    rng = random.Random(hashlib.sha256(hand_id.encode()).digest())
    best: Round | None = None
    started = time.monotonic()
    for attempt in range(attempts):
        seeds = {s: hashlib.sha256(f"{hand_id}/{attempt}/{s}".encode()).digest()[:8] for s in seats}
        d = dealt(seed, hand_id, seeds, dealer)
        for _ in range(playouts):
            r = playout(d, rng, want_dig=want_dig, dig_chance=rng.choice((0.2, 0.5, 0.9)))
            if r.reason != "went_out" or not accept(r):
                continue
            if best is None or prefer(r) > prefer(best):
                r.seeds = seeds
                best = r
        spent = time.monotonic() - started
        if (best is not None and spent > budget_seconds) or spent > deadline_seconds:
            break
    assert best is not None, f"no round accepted in hand {hand_id} after {attempts} deals"
    return best


# -- playing a round through the public API ------------------------------------------------


def group(cards: Iterable[int]) -> cards_pb2.CardGroup:
    return cards_pb2.CardGroup(cards=[wire(c) for c in cards])


def seed_and_deal(
    players: dict[int, Player], r: Round, hand_id: str, timeout: float = 60.0
) -> None:
    """Send every dealt seat's client seed and check the deal each sees is the plan's."""
    dealt_in = {s: players[s] for s in r.deal.order}
    seeds_and_deal(dealt_in, r.seeds, r.deal.hands, r.deal.upcard, hand_id, timeout)


def send(player: Player, move: Move, hand_id: str) -> api.PlayResponse | None:
    """One move through the public API (checking a card drawn or taken against the plan)."""
    t = move.turn_no
    if move.kind in ("draw", "nothing"):
        got = player.draw(STOCK, turn_no=t)
        if move.kind == "draw":
            assert got.card.index == move.card, (
                f"turn {t}: drew {face(got.card.index)}, the plan says {face(move.card or 0)}"
            )
        return None
    if move.kind == "discard":
        assert move.card is not None
        player.discard(wire(move.card), turn_no=t)
        return None
    command: Message
    if move.kind == "dig":
        command = rpb.TakeFromPile(depth=move.depth, meld=[wire(c) for c in move.meld])
    elif move.kind == "meld":
        command = rpb.Meld(groups=[group(g) for g in move.groups])
    elif move.kind == "lay_off":
        assert move.card is not None
        command = rpb.LayOff(card=wire(move.card), meld_id=move.meld_id)
    else:
        command = rpb.GoOut(
            groups=[group(g) for g in move.groups],
            layoffs=[rpb.LayoffTarget(card=wire(c), meld_id=m) for c, m in move.layoffs],
        )
    return player.play(command, hand_id, t)


def play_round(
    players: dict[int, Player],
    r: Round,
    hand_id: str,
    before: Callable[[Move], None] = lambda _m: None,
) -> None:
    """Send every move of ``r``, each in its turn as its seat (``before`` is called just before
    each move is sent)."""
    turn = 0
    for move in r.moves:
        p = players[move.seat]
        if move.turn_no != turn:
            turn_view(p, hand_id, move.turn_no, False, 60.0)
            turn = move.turn_no
        before(move)
        send(p, move, hand_id)


# -- the match's rounds --------------------------------------------------------------------------


def after(totals: dict[int, int], r: Round) -> dict[int, int]:
    """The running totals after round ``r``."""
    return {s: totals[s] + r.scores().get(s, 0) for s in totals}


def tied_at_top(totals: dict[int, int], target: int) -> tuple[int, ...]:
    """The seats tied at the top at or over ``target`` (none: no tie there)."""
    top = max(totals.values())
    tied = tuple(s for s in sorted(totals) if totals[s] == top)
    return tied if top >= target and len(tied) > 1 else ()


def first_round_done(r: Round) -> bool:
    """What the match's first round must show: a dig :data:`DIG_DEPTH` deep (its deepest card
    melded at once), a lay-off onto another seat's run, a going out without a discard, and a
    seat with a score below zero."""
    return bool(
        r.dig_turn
        and r.foreign_run_layoffs
        and r.reason == "went_out"
        and not r.discarded_out
        and min(r.scores().values()) < 0
    )


def plan_match_round(
    key: bytes,
    hand_id: str,
    dealer: int,
    seats: Sequence[int],
    totals: dict[int, int],
    target: int,
    *,
    first: bool,
    tie_break: bool,
    tie_seconds: float = 25.0,
) -> Round:
    """The next round of a race to ``target`` from ``totals`` (every seat of the match):

    - the first: :func:`first_round_done`, nobody at the target;
    - a tie-break (``seats`` the tied): they end it untied;
    - any other: a tie at the top at or over the target if one is found within
      ``tie_seconds``, else a round that leaves everybody below it, the two leaders as high as
      can be (so that the next round can tie them)."""
    if first:
        return plan_round(
            key,
            hand_id,
            dealer,
            seats,
            lambda r: first_round_done(r) and max(after(totals, r).values()) < target,
            want_dig=True,
            budget_seconds=3,
        )
    if tie_break:

        def untied(r: Round) -> bool:
            new = after(totals, r)
            return len({new[s] for s in seats}) == len(seats)

        return plan_round(key, hand_id, dealer, seats, untied, budget_seconds=0)
    leaders = sorted(totals.values())[-2:]
    try:
        assert min(leaders) >= target - TIE_REACH, "too far from the target to tie over it"
        return plan_round(
            key,
            hand_id,
            dealer,
            seats,
            lambda r: bool(tied_at_top(after(totals, r), target)),
            budget_seconds=0,
            deadline_seconds=tie_seconds,
        )
    except AssertionError:
        pass

    def second(r: Round) -> float:
        return sorted(after(totals, r).values())[-2]

    return plan_round(
        key,
        hand_id,
        dealer,
        seats,
        lambda r: max(after(totals, r).values()) < target,
        prefer=second,
        budget_seconds=3,
    )
