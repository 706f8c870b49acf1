"""Random legal hands, played through the variant interface, keep the promises of replay,
money and privacy (docs/rules/promises.md#replay-is-exact,
docs/rules/promises.md#tokens-are-conserved, docs/rules/promises.md#nobody-loses-more-than-they-had,
docs/rules/promises.md#players-see-only-their-own,
docs/rules/promises.md#bad-input-changes-nothing)."""

from __future__ import annotations

import copy
import json
import random

import pytest
from hand_play import Table, give
from hypothesis import given, settings
from hypothesis import strategies as st

from rummy_rules import json_form
from rummy_rules.cards import RANKS, SUITS, Card
from rummy_rules.commands import (
    Command,
    Discard,
    DrawFromDiscardPile,
    DrawFromStock,
    LeaveHand,
    TurnTimeout,
)
from rummy_rules.errors import RuleViolation
from rummy_rules.events import HandEnded
from rummy_rules.indian import INDIAN_POINTS, Declare, Drop, HandState, Phase
from rummy_rules.indian.arrangement import valid_discards
from rummy_rules.indian.rules import IndianPointsRules, bombay_baazi
from rummy_rules.settlement import reservation_hundredths
from rummy_testing.profiles import examples


def ready_hand(rng: random.Random) -> list[Card]:
    """13 cards that make a valid declaration whatever the wild rank: a pure run of four, two
    pure runs of three and a set of three, with random ranks and suits (copy 1 for repeats;
    a face is used at most twice, so two decks hold it)."""
    while True:
        cards = _ready_hand_attempt(rng)
        if all(c.copy < 2 for c in cards):
            return cards


def _ready_hand_attempt(rng: random.Random) -> list[Card]:
    faces = []
    for length in (4, 3, 3):
        suit, start = rng.choice(SUITS), rng.randrange(0, 14 - length)
        faces += [(RANKS[start + k], suit) for k in range(length)]
    rank = rng.choice(RANKS)
    faces += [(rank, suit) for suit in rng.sample(SUITS, 3)]
    cards: list[Card] = []
    for rank_, suit_ in faces:
        copy_ = sum(1 for c in cards if (c.rank, c.suit) == (rank_, suit_))
        cards.append(Card(rank_, suit_, copy_))
    return cards


def legal_commands(state: HandState, at_ms: int, rng: random.Random) -> list[tuple[float, Command]]:
    """Weighted commands the rules accept in ``state`` (the seat on turn, plus leaving)."""
    seat, turn = state.turn_seat, state.turn_no
    assert seat is not None
    me = state.seat_state(seat)
    assert me is not None
    out: list[tuple[float, Command]] = [(0.08, TurnTimeout(turn_no=turn, at_ms=at_ms))]
    others = [s for s in state.active_seats() if s != seat]
    out.append((0.01, LeaveHand(seat=rng.choice(others), at_ms=at_ms)))
    if state.drawn_card is None:
        if state.stock:
            out.append((0.6, DrawFromStock(seat=seat, turn_no=turn, at_ms=at_ms)))
        if state.discard_pile:
            out.append((0.3, DrawFromDiscardPile(seat=seat, turn_no=turn, at_ms=at_ms)))
        out.append((0.02, Drop(seat=seat, turn_no=turn, at_ms=at_ms)))
    else:
        allowed = [c for c in me.cards if not _from_pile(state, c)]
        out.append((0.9, Discard(seat=seat, turn_no=turn, card=rng.choice(allowed), at_ms=at_ms)))
        out.append(
            (0.02, Declare(seat=seat, turn_no=turn, face_down=rng.choice(allowed), at_ms=at_ms))
        )
        assert state.rule_set is not None
        assert isinstance(state.rule_set.options, IndianPointsRules)
        options = state.rule_set.options.meld_options
        shows = [c for c in valid_discards(me.cards, state.wild_rank, options) if c in allowed]
        if shows:
            out.append((50.0, Declare(seat=seat, turn_no=turn, face_down=shows[0], at_ms=at_ms)))
    return out


def _from_pile(state: HandState, card: Card) -> bool:
    return (
        state.drawn_source is not None
        and state.drawn_source.value == "discard_pile"
        and (card == state.drawn_card)
    )


def refused_commands(state: HandState, at_ms: int) -> list[Command]:
    """Commands the rules must refuse in ``state``."""
    seat, turn = state.turn_seat, state.turn_no
    assert seat is not None
    other = next(s for s in state.active_seats() if s != seat)
    out: list[Command] = [
        DrawFromStock(seat=other, turn_no=turn, at_ms=at_ms),  # not its turn
        Drop(seat=seat, turn_no=turn - 1, at_ms=at_ms),  # stale turn
        Discard(seat=seat, turn_no=turn, card=state.discard_pile[-1], at_ms=at_ms)
        if state.discard_pile and state.drawn_card is not None
        else DrawFromStock(seat=99, turn_no=turn, at_ms=at_ms),  # not in the hand
    ]
    if state.drawn_card is None:
        me = state.seat_state(seat)
        assert me is not None
        out.append(Discard(seat=seat, turn_no=turn, card=me.cards[0], at_ms=at_ms))  # no draw yet
    else:
        out.append(DrawFromStock(seat=seat, turn_no=turn, at_ms=at_ms))  # second draw
    return out


def assert_private(state: HandState) -> None:
    """No seat's view holds another seat's cards or any stock card."""
    stock = set(state.stock)
    for a in state.seats:
        view = INDIAN_POINTS.view(state, a.seat)
        seen = set(view.cards) | set(view.discard_pile)
        assert view.result is None
        for b in state.seats:
            if b.seat != a.seat:
                assert not seen & set(b.cards)
        assert not seen & stock
        assert view.stock_count == len(state.stock)


def play_random_hand(seed: int, seat_count: int, table_size: int, max_steps: int = 400) -> Table:
    rng = random.Random(seed)
    rules = bombay_baazi(table_size, rng.choice([0, 1, 25, 100]), rng.choice([0, 500, 1000, 1500]))
    t = Table(rules, hand_id=f"hand-{seed}", server_seed=rng.randbytes(32))
    seats = sorted(rng.sample(range(table_size), seat_count))
    seeds = {s: rng.randbytes(rng.randrange(0, 9)).hex() for s in seats if rng.random() < 0.7}
    dealer = rng.choice(seats)
    rig = None
    if rng.random() < 0.35:  # give the first player a ready hand, so valid declares happen
        first = seats[(seats.index(dealer) + 1) % len(seats)]
        wanted = ready_hand(rng)
        rig = lambda d: give(d, first, wanted)  # noqa: E731
    try:
        t.start(seats, dealer, seeds, rig)
    except ValueError:  # the ready hand needed the cut or the open card: deal it as shuffled
        t = Table(rules, hand_id=f"hand-{seed}", server_seed=t.server_seed)
        t.start(seats, dealer, seeds)
    patience = rng.random()  # low: many drops and timeouts; high: long hands
    for step in range(max_steps):
        if t.state.phase is not Phase.PLAYING:
            break
        at = t.tick(rng.randrange(1, 40_000))
        if step % 7 == 0:
            before = copy.deepcopy(t.state)
            n = len(t.events)
            for bad in refused_commands(t.state, at):
                with pytest.raises(RuleViolation):
                    t.run(bad)
            assert t.state == before and len(t.events) == n
            assert t.run(TurnTimeout(turn_no=t.state.turn_no - 1, at_ms=at)) == ()
            assert_private(t.state)
        options = legal_commands(t.state, at, rng)
        weights = [w if w >= 0.3 else w * (1.2 - patience) for w, _ in options]
        command = rng.choices([c for _, c in options], weights)[0]
        before = t.state
        snapshot = copy.deepcopy(before) if step % 5 == 0 else None
        new = t.run(command)
        if snapshot is not None:
            assert before == snapshot  # decide and apply leave the old state as it was
        assert new, f"{command} was legal but caused no event"
        t.reshuffle_if_needed(new)
    return t


def check_hand(t: Table) -> None:
    wire = [json.loads(json.dumps(json_form.to_dict(e))) for e in t.events]
    replayed = INDIAN_POINTS.fold(json_form.from_dict(d) for d in wire)
    assert replayed == t.state
    if isinstance(t.state.result, HandEnded):
        s = t.state.result.settlement
        assert sum(line.amount_hundredths for line in s.lines) + s.commission_hundredths == 0
        cap = reservation_hundredths(t.rule_set)
        for line in s.lines:
            assert -line.amount_hundredths <= cap or line.seat == s.winner_seat
        winner = [r for r in t.state.result.results if r.seat == s.winner_seat]
        assert winner[0].points == 0


@settings(max_examples=examples(ci=25, dev=8))
@given(
    seed=st.integers(0, 2**32 - 1),
    table_and_seats=st.sampled_from([(4, 2), (4, 3), (4, 4), (6, 2), (6, 6), (8, 8), (8, 3)]),
)
def test_random_hands_replay_exactly_settle_to_zero_and_keep_cards_private(
    seed: int, table_and_seats: tuple[int, int]
) -> None:
    table_size, seat_count = table_and_seats
    check_hand(play_random_hand(seed, seat_count, table_size))
