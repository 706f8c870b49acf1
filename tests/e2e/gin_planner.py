"""A test player that controls both seats of a gin table and plans each hand's outcome.

With the fairness service's test-only seed key (``RUMMY_FAIRNESS_SEED_KEY``) the server seed of
hand ``h`` is HMAC-SHA256(key, ``h``), so the test, which also contributes both players' client
seeds, knows the whole deck before the deal: it recomputes it with the product's shuffle
(``rummy_rules.shuffle.deal``, ``docs/rules/shuffle-spec.md#the-deal``: ten each one at a time
from the non-dealer, the upcard, the rest the stock). :func:`plan_hand` then picks, for an
outcome the test names with its numbers (a knock with the knocker's deadwood ``k`` and the
defender's ``d``, a gin or big gin against deadwood ``d``, the wall), the final hands of both
seats and the play that gets there, trying other client seeds until it finds one.

The final hands are chosen and checked by this module's own evaluator, which shares no code with
the rules under test (:func:`min_deadwood`: every set and run found by brute force, a search
over disjoint melds; :func:`lays_off`: whether any defender card extends any meld the knocker's
ten could show, so that no lay-off is possible whatever arrangement the server picks). The
numbers are thus the test's, worked by the rules of ``docs/rules/gin.md``; the server's score
must equal them.

The play (:func:`simulate`): each seat draws the pile's top when its final hand needs it (at the
first-turn offer: takes the upcard or passes), else the stock's top; discards a card its final
hand does not hold, preferring one the other seat needs (which that seat then takes), else the
card it drew; the knocker knocks (gin, big gin) once both seats hold their final hands. Every
move is then sent through the public gRPC API (:func:`play_plan`), and each card drawn and the
hand dealt are checked against the plan, so a deal that differs fails at once with a message.

Cards are canonical indices 0..51 (clubs, diamonds, hearts, spades; ace to king): suit
``i // 13``, rank ``i % 13 + 1``, value ``min(rank, 10)``.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import combinations

import grpc

from rummy.common.v1 import cards_pb2
from rummy.gin.v1 import events_pb2 as gpb
from rummy.table.v1 import events_pb2 as table_events
from rummy.table.v1 import table_service_pb2 as api
from rummy_rules.gin.rules import GIN_HAND_SIZE, GIN_SHOE, GinOptions
from rummy_rules.shuffle import ShuffleInputs, deal
from rummy_testing.players import Player

Cards = frozenset[int]
STOCK = table_events.DRAW_SOURCE_STOCK
DISCARD_PILE = table_events.DRAW_SOURCE_DISCARD_PILE
#: The wall: a discard that leaves this many stock cards ends the hand drawn.
WALL_STOCK = 2


def rank(card: int) -> int:
    return card % 13 + 1


def suit(card: int) -> int:
    return card // 13


def value(card: int) -> int:
    return min(rank(card), 10)


def face(card: int) -> str:
    return GIN_SHOE.index_to_card(card).face


def wire(card: int) -> cards_pb2.Card:
    return cards_pb2.Card(index=card, face=face(card))


# -- the evaluator (docs/rules/gin.md#melds, #deadwood), independent of rummy_rules.gin ---------


def melds_within(cards: Iterable[int]) -> list[Cards]:
    """Every meld of ``cards``: each set of 3 or 4 of a rank, each run of 3+ consecutive ranks
    of a suit (ace low, no wrap), sub-runs included."""
    held = sorted(set(cards))
    found: list[Cards] = []
    by_rank: dict[int, list[int]] = {}
    for c in held:
        by_rank.setdefault(rank(c), []).append(c)
    for same in by_rank.values():
        for size in (3, 4):
            found.extend(frozenset(m) for m in combinations(same, size))
    have = set(held)
    for s in range(4):
        for low in range(13):
            run = []
            for r in range(low, 13):
                if s * 13 + r not in have:
                    break
                run.append(s * 13 + r)
                if len(run) >= 3:
                    found.append(frozenset(run))
    return found


@lru_cache(maxsize=200_000)
def min_deadwood(cards: Cards) -> int:
    """The least deadwood over every arrangement of ``cards`` into disjoint melds (points)."""
    if not cards:
        return 0
    first = min(cards)
    best = value(first) + min_deadwood(cards - {first})
    for meld in melds_within(cards):
        if first in meld:
            best = min(best, min_deadwood(cards - meld))
    return best


def lays_off(defender: Cards, knocker: Cards) -> bool:
    """Whether any defender card extends any meld the knocker's cards can show: a set of three's
    fourth card, or the card of a run's suit just below or above it. When none does, no lay-off
    (nor a chain of them) is possible under any arrangement the server picks."""
    for meld in melds_within(knocker):
        ranks = {rank(c) for c in meld}
        if len(ranks) == 1:
            if len(meld) == 3 and any(rank(c) in ranks for c in defender):
                return True
            continue
        low, high = min(meld), max(meld)
        if (rank(low) > 1 and low - 1 in defender) or (rank(high) < 13 and high + 1 in defender):
            return True
    return False


def _all_melds() -> list[Cards]:
    return [m for m in melds_within(range(52)) if len(m) <= 5]


ALL_MELDS = _all_melds()


# -- the deal -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dealt:
    """A deal as the dealer will make it: each seat's ten, the upcard, the stock (top first)."""

    hands: dict[int, Cards]
    upcard: int
    stock: tuple[int, ...]
    dealer: int


def server_seed(key: bytes, hand_id: str) -> bytes:
    """The fairness service's seed for ``hand_id`` under ``RUMMY_FAIRNESS_SEED_KEY`` = ``key``."""
    return hmac.new(key, hand_id.encode(), hashlib.sha256).digest()


def dealt(seed: bytes, hand_id: str, seeds: dict[int, bytes], dealer: int) -> Dealt:
    """The deal of ``hand_id`` from the server seed and the client seeds by seat."""
    inputs = ShuffleInputs(seed, hand_id, tuple(sorted(seeds.items())))
    out = deal(inputs, GIN_SHOE, sorted(seeds), dealer, GIN_HAND_SIZE, GinOptions.deal_shape)
    assert out.first_open is not None
    return Dealt(
        hands={h.seat: frozenset(GIN_SHOE.card_to_index(c) for c in h.cards) for h in out.hands},
        upcard=GIN_SHOE.card_to_index(out.first_open),
        stock=tuple(GIN_SHOE.card_to_index(c) for c in out.stock),
        dealer=dealer,
    )


# -- outcomes -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What a hand must end with. ``kind``: ``wall``, ``knock`` (the knocker's ten at deadwood
    ``knocker_deadwood``; the defender's at ``defender_deadwood``, nothing to lay off: a knock
    or, when the defender's is not higher, an undercut), ``gin`` (the knocker's ten all melded)
    or ``big_gin`` (all eleven melded); ``knocker`` the seat that knocks."""

    kind: str
    knocker: int = 0
    knocker_deadwood: int = 0
    defender_deadwood: int = 0


def wall() -> Outcome:
    return Outcome("wall")


def knock(seat: int, knocker_deadwood: int, defender_deadwood: int) -> Outcome:
    return Outcome("knock", seat, knocker_deadwood, defender_deadwood)


def gin(seat: int, defender_deadwood: int) -> Outcome:
    return Outcome("gin", seat, 0, defender_deadwood)


def big_gin(seat: int, defender_deadwood: int) -> Outcome:
    return Outcome("big_gin", seat, 0, defender_deadwood)


# -- the play -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Move:
    """One call: ``kind`` pass / draw_stock / draw_pile / discard / knock / gin / big_gin by
    ``seat`` in turn ``turn_no``; ``card`` the card drawn (expected), discarded or laid face
    down."""

    seat: int
    turn_no: int
    kind: str
    card: int | None = None


@dataclass
class Plan:
    """A hand's plan: the client seeds to send, the deal they make, the final hands, the moves."""

    seeds: dict[int, bytes]
    deal: Dealt
    outcome: Outcome
    finals: dict[int, Cards]
    moves: list[Move] = field(default_factory=list)


def simulate(d: Dealt, outcome: Outcome, finals: dict[int, Cards]) -> list[Move] | None:
    """The moves that bring each seat to its final hand (``finals``: the knocker's ten kept, or
    eleven for big gin; the defender's ten) and end the hand as ``outcome`` says; at the wall
    ``finals`` is ignored: every turn passes or draws the stock and discards that card. None when
    this play cannot get there before the wall."""
    hands = {s: set(h) for s, h in d.hands.items()}
    stock = list(d.stock)
    pile = [d.upcard]
    seats = sorted(hands)
    non_dealer = next(s for s in seats if s != d.dealer)
    seat, turn_no, offers = non_dealer, 1, 0
    moves: list[Move] = []
    walling = outcome.kind == "wall"

    def needs(s: int) -> set[int]:
        return set() if walling else set(finals[s]) - hands[s]

    while turn_no < 80:
        other = next(s for s in seats if s != seat)
        offer = turn_no == offers + 1 and offers < 2
        top = pile[-1] if pile else None
        taken = None
        if offer:
            if top in needs(seat):
                taken = pile.pop()
                moves.append(Move(seat, turn_no, "draw_pile", taken))
                drawn = taken
            else:
                moves.append(Move(seat, turn_no, "pass"))
                offers += 1
                seat, turn_no = other, turn_no + 1
                continue
        elif top is not None and top in needs(seat) and not (offers == 2 and turn_no == 3):
            taken = pile.pop()
            moves.append(Move(seat, turn_no, "draw_pile", taken))
            drawn = taken
        else:
            drawn = stock.pop(0)
            moves.append(Move(seat, turn_no, "draw_stock", drawn))
        hands[seat].add(drawn)
        if not walling and seat == outcome.knocker and hands[other] == set(finals[other]):
            if outcome.kind == "big_gin" and hands[seat] == set(finals[seat]):
                moves.append(Move(seat, turn_no, "big_gin"))
                return moves
            if outcome.kind in ("knock", "gin") and set(finals[seat]) <= hands[seat]:
                (face_down,) = hands[seat] - set(finals[seat])
                if face_down == taken:
                    return None
                moves.append(Move(seat, turn_no, outcome.kind, face_down))
                return moves
        if walling:
            discard = drawn if taken is None else max(hands[seat] - {taken})
        else:
            surplus = hands[seat] - set(finals[seat]) - ({taken} if taken is not None else set())
            if not surplus:
                return None
            wanted = surplus & needs(other)
            if wanted:
                discard = min(wanted)
            elif drawn in surplus:
                discard = drawn
            else:
                discard = max(surplus, key=lambda c: (value(c), c))
        hands[seat].discard(discard)
        pile.append(discard)
        moves.append(Move(seat, turn_no, "discard", discard))
        if len(stock) <= WALL_STOCK:
            return moves if walling else None
        seat, turn_no = other, turn_no + 1
    return None


# -- choosing the final hands ----------------------------------------------------------------


def _costs(d: Dealt, seat: int) -> dict[int, float]:
    """How dear each card is for ``seat`` to hold at the end: its own 0, the other hand's and
    the upcard 1, the n-th stock card 1 + n/4 (the first 20 only)."""
    cost: dict[int, float] = {}
    for s, h in d.hands.items():
        for c in h:
            cost[c] = 0.0 if s == seat else 1.0
    cost[d.upcard] = 1.0
    for n, c in enumerate(d.stock[:20]):
        cost[c] = 1.0 + n / 4
    return cost


def _loose(
    pool: list[int], count: int, total: int, rng: random.Random, tries: int = 40
) -> list[int] | None:
    """``count`` cards of ``pool`` (cheapest first, shuffled a little) whose values sum to
    ``total``."""
    if count == 0:
        return [] if total == 0 else None
    for _ in range(tries):
        order = sorted(pool, key=lambda c: rng.random())
        picked: list[int] = []
        left = total
        for c in order:
            need = count - len(picked)
            if need == 0:
                break
            v = value(c)
            rest = need - 1
            if v <= left - rest and (rest > 0 or v == left) and left - v <= 10 * rest:
                picked.append(c)
                left -= v
        if len(picked) == count and left == 0:
            return picked
    return None


def find_hand(
    size: int,
    deadwood: int,
    cost: dict[int, float],
    avoid: Cards,
    rng: random.Random,
) -> Cards | None:
    """``size`` cards from ``cost``'s (not in ``avoid``) whose least deadwood is exactly
    ``deadwood``: a few cheap melds and loose cards summing to it, checked by
    :func:`min_deadwood`."""
    usable = {c for c in cost if c not in avoid}
    melds = [m for m in ALL_MELDS if m <= usable]
    if not melds and deadwood == 0:
        return None
    sizes = [m for m in range(size, -1, -1) if (size - m) <= deadwood <= 10 * (size - m)]
    if deadwood == 0:
        sizes = [size]
    rng.shuffle(sizes)
    for melded in sizes[:4]:
        ranked = sorted(melds, key=lambda m: sum(cost[c] for c in m) / len(m) + rng.random())
        chosen: set[int] = set()
        for m in ranked:
            if len(chosen) == melded:
                break
            if not (m & chosen) and len(chosen) + len(m) <= melded:
                chosen |= m
        if len(chosen) != melded:
            continue
        pool = sorted(usable - chosen, key=lambda c: cost[c] + rng.random() * 2)[:18]
        loose = _loose(pool, size - melded, deadwood, rng)
        if loose is None:
            continue
        hand = frozenset(chosen | set(loose))
        if min_deadwood(hand) == deadwood:
            return hand
    return None


def choose_finals(d: Dealt, outcome: Outcome, rng: random.Random) -> dict[int, Cards] | None:
    """Final hands for ``outcome`` from this deal (one random try), or None."""
    knocker = outcome.knocker
    defender = next(s for s in d.hands if s != knocker)
    size = 11 if outcome.kind == "big_gin" else 10
    mine = find_hand(size, outcome.knocker_deadwood, _costs(d, knocker), frozenset(), rng)
    if mine is None:
        return None
    theirs = find_hand(10, outcome.defender_deadwood, _costs(d, defender), mine, rng)
    if theirs is None:
        return None
    if outcome.kind == "knock" and lays_off(theirs, mine):
        return None
    return {knocker: mine, defender: theirs}


def plan_hand(
    key: bytes,
    hand_id: str,
    dealer: int,
    outcome: Outcome,
    *,
    deal_ok: Callable[[Dealt], bool] = lambda _d: True,
    plan_ok: Callable[[Plan], bool] = lambda _p: True,
    attempts: int = 400,
) -> Plan:
    """A plan for ``hand_id`` (dealt by ``dealer``) ending as ``outcome``: client seeds tried in
    a fixed order (the same hand id plans the same way) until a deal satisfies ``deal_ok`` and
    final hands and a play for it are found that satisfy ``plan_ok``. Raises AssertionError
    when none is found."""
    seed = server_seed(key, hand_id)
    rng = random.Random(hashlib.sha256(hand_id.encode()).digest())
    for attempt in range(attempts):
        seeds = {
            s: hashlib.sha256(f"{hand_id}/{attempt}/{s}".encode()).digest()[:8] for s in (0, 1)
        }
        d = dealt(seed, hand_id, seeds, dealer)
        if not deal_ok(d):
            continue
        if outcome.kind == "wall":
            moves = simulate(d, outcome, {})
            assert moves is not None
            return Plan(seeds, d, outcome, {}, moves)
        for _ in range(30):
            finals = choose_finals(d, outcome, rng)
            if finals is None:
                continue
            moves = simulate(d, outcome, finals)
            if moves is not None and plan_ok(plan := Plan(seeds, d, outcome, finals, moves)):
                return plan
    raise AssertionError(f"no plan for {outcome} in hand {hand_id} after {attempts} deals")


# -- playing a plan through the public API -------------------------------------------------


def turn_view(
    player: Player, hand_id: str, turn_no: int, drawn: bool, timeout: float
) -> api.PlayerView:
    """``player``'s view of its turn ``turn_no`` in ``hand_id``, drawn or not as ``drawn``
    says. Raises TimeoutError after ``timeout`` seconds."""
    return player.wait(
        lambda v: (
            v.hand_id == hand_id
            and v.phase == api.HAND_PHASE_PLAYING
            and v.turn_no == turn_no
            and v.turn_seat == v.my_seat
            and v.has_drawn == drawn
        ),
        timeout,
        f"hand {hand_id} turn {turn_no} ({'discard' if drawn else 'draw'})",
    )


def seed_and_deal(
    players: dict[int, Player], plan: Plan, hand_id: str, timeout: float = 60.0
) -> None:
    """Send both client seeds and check the deal each seat sees is the plan's."""
    seeds_and_deal(players, plan.seeds, plan.deal.hands, plan.deal.upcard, hand_id, timeout)


def seeds_and_deal(
    players: dict[int, Player],
    seeds: dict[int, bytes],
    hands: dict[int, Cards],
    upcard: int,
    hand_id: str,
    timeout: float = 60.0,
) -> None:
    """Send each of ``players``' client seed (by seat) and check each is dealt ``hands[seat]``
    and sees ``upcard`` alone on the discard pile."""
    for s, p in players.items():
        p.contribute_seed(hand_id, seeds[s])
    for s, p in players.items():
        view = p.wait(
            lambda v: v.hand_id == hand_id and v.phase == api.HAND_PHASE_PLAYING,
            timeout,
            f"hand {hand_id} dealt",
        )
        got = frozenset(c.index for c in view.my_cards)
        assert got == hands[s], (
            f"seat {s} was dealt {sorted(map(face, got))}, the plan says "
            f"{sorted(map(face, hands[s]))}: is RUMMY_FAIRNESS_SEED_KEY the test's?"
        )
        assert [c.index for c in view.discard_pile] == [upcard]


def play_plan(
    players: dict[int, Player], plan: Plan, hand_id: str, timeout: float = 60.0
) -> api.PlayResponse | None:
    """Send every move of ``plan`` (each in its turn, as its seat); returns the Play answer of the
    knock, gin or big gin (None at the wall)."""
    answer = None
    for move in plan.moves:
        p = players[move.seat]
        drawn = move.kind == "discard" or move.kind in ("knock", "gin", "big_gin")
        turn_view(p, hand_id, move.turn_no, drawn, timeout)
        if move.kind == "pass":
            p.play(gpb.PassUpcard(), hand_id=hand_id, turn_no=move.turn_no)
        elif move.kind in ("draw_stock", "draw_pile"):
            source = STOCK if move.kind == "draw_stock" else DISCARD_PILE
            got = p.draw(source, turn_no=move.turn_no)
            assert got.card.index == move.card, (
                f"turn {move.turn_no}: drew {face(got.card.index)}, the plan says "
                f"{face(move.card or 0)}"
            )
        elif move.kind == "discard":
            assert move.card is not None
            p.discard(wire(move.card), turn_no=move.turn_no)
        elif move.kind == "knock":
            assert move.card is not None
            answer = p.play(gpb.Knock(face_down=wire(move.card)), hand_id, move.turn_no)
        elif move.kind == "gin":
            assert move.card is not None
            answer = p.play(gpb.Gin(face_down=wire(move.card)), hand_id, move.turn_no)
        else:
            answer = p.play(gpb.BigGin(), hand_id, move.turn_no)
    return answer


def over_limit_discards(plan: Plan, limit: int) -> list[int]:
    """The cards the knocker of ``plan`` could lay face down on its knock turn that leave more
    than ``limit`` deadwood (by the evaluator), those leaving at most 10 first."""
    last = plan.moves[-1]
    assert last.kind == "knock" and last.card is not None
    eleven = plan.finals[plan.outcome.knocker] | {last.card}
    over = sorted(
        (c for c in eleven if min_deadwood(eleven - {c}) > limit),
        key=lambda c: (min_deadwood(eleven - {c}) > 10, c),
    )
    return over


def refused(call: Callable[[], object]) -> grpc.RpcError:
    """The RpcError ``call`` raises (AssertionError when it succeeds)."""
    try:
        call()
    except grpc.RpcError as error:
        return error
    raise AssertionError("the call was accepted")
