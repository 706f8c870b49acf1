"""Before the first turn: stakes, the seed commitment, the client-seed window, the deal."""

from __future__ import annotations

import dataclasses
import hashlib

import pytest
from hand_play import T0, table

from rummy_rules.cards import parse_card
from rummy_rules.commands import (
    AbortHand,
    ContributeClientSeed,
    Deal,
    LeaveHand,
    RecordSeedCommitment,
    RecordStakeReserved,
    StartHand,
    TurnTimeout,
)
from rummy_rules.errors import ErrorCode, RuleViolation
from rummy_rules.events import (
    ClientSeedContributed,
    HandAborted,
    SeatAccount,
    SeatSeed,
    SeedsLocked,
    SeedWindowOpened,
)
from rummy_rules.indian import INDIAN_POINTS, HandState
from rummy_rules.indian.rules import bombay_baazi
from rummy_rules.shuffle import deal
from rummy_rules.variant import Deadline, DeadlineKind

RULES = bombay_baazi(4, 100, 1000)
COMMITMENT = hashlib.sha256(b"\x07" * 32).hexdigest()


def started(seats: tuple[int, ...] = (0, 1, 2), dealer: int | None = None) -> HandState:
    dealer = seats[-1] if dealer is None else dealer
    accounts = tuple(SeatAccount(s, f"acct-{s}") for s in seats)
    command = StartHand(hand_id="h", seats=accounts, dealer_seat=dealer, rule_set=RULES, at_ms=T0)
    return INDIAN_POINTS.fold(INDIAN_POINTS.decide(HandState(), command))


def run(state: HandState, command: object) -> tuple[HandState, tuple[object, ...]]:
    events = INDIAN_POINTS.decide(state, command)  # type: ignore[arg-type]
    return INDIAN_POINTS.fold(events, state), events


def refused(state: HandState, command: object) -> ErrorCode:
    with pytest.raises(RuleViolation) as info:
        INDIAN_POINTS.decide(state, command)  # type: ignore[arg-type]
    return info.value.code


def window_open(seats: tuple[int, ...] = (0, 1, 2)) -> HandState:
    state = started(seats)
    for s in seats:
        state, _ = run(state, RecordStakeReserved(seat=s, amount_hundredths=13000, at_ms=T0))
    state, _ = run(state, RecordSeedCommitment(commitment=COMMITMENT, at_ms=T0 + 500))
    return state


def test_the_seed_window_opens_only_once_every_stake_is_reserved_and_the_seed_committed() -> None:
    state = started()
    state, events = run(state, RecordSeedCommitment(commitment=COMMITMENT, at_ms=T0))
    state, events = run(state, RecordStakeReserved(seat=0, amount_hundredths=13000, at_ms=T0))
    state, events = run(state, RecordStakeReserved(seat=1, amount_hundredths=13000, at_ms=T0))
    assert not any(isinstance(e, SeedWindowOpened) for e in events)
    assert INDIAN_POINTS.deadline(state) is None
    state, events = run(state, RecordStakeReserved(seat=2, amount_hundredths=13000, at_ms=T0 + 10))
    assert events[-1] == SeedWindowOpened(deadline_ms=T0 + 10 + RULES.seed_window_seconds * 1000)
    assert INDIAN_POINTS.deadline(state) == Deadline(
        DeadlineKind.SEED_WINDOW, 0, T0 + 10 + RULES.seed_window_seconds * 1000
    )
    assert refused(state, RecordStakeReserved(seat=2, amount_hundredths=1, at_ms=T0)) is (
        ErrorCode.WRONG_PHASE
    )


def test_the_seeds_lock_as_soon_as_every_seat_has_contributed() -> None:
    state = window_open((0, 1))
    state, events = run(state, ContributeClientSeed(seat=1, seed_hex="BEEF", at_ms=T0 + 600))
    assert events == (ClientSeedContributed(seat=1, seed_hex="beef"),)
    assert refused(state, ContributeClientSeed(seat=1, seed_hex="00", at_ms=T0)) is (
        ErrorCode.DUPLICATE
    )
    state, events = run(state, ContributeClientSeed(seat=0, seed_hex="", at_ms=T0 + 700))
    assert events[-1] == SeedsLocked(
        commitment=COMMITMENT, client_seeds=(SeatSeed(0, ""), SeatSeed(1, "beef"))
    )


def test_when_the_window_closes_a_silent_seat_contributes_the_empty_seed() -> None:
    state = window_open()
    state, _ = run(state, ContributeClientSeed(seat=2, seed_hex="0a0b", at_ms=T0 + 600))
    assert run(state, TurnTimeout(turn_no=1, at_ms=T0 + 9000))[1] == ()  # not the window's number
    state, events = run(state, TurnTimeout(turn_no=0, at_ms=T0 + 9000))
    assert events == (
        SeedsLocked(
            commitment=COMMITMENT,
            client_seeds=(SeatSeed(0, ""), SeatSeed(1, ""), SeatSeed(2, "0a0b")),
        ),
    )
    assert run(state, TurnTimeout(turn_no=0, at_ms=T0 + 9001))[1] == ()  # a late repeat: stale
    assert refused(state, ContributeClientSeed(seat=0, seed_hex="01", at_ms=T0)) is (
        ErrorCode.WRONG_PHASE
    )


def test_a_client_seed_must_be_hex_of_at_most_256_bytes() -> None:
    state = window_open()
    assert refused(state, ContributeClientSeed(seat=0, seed_hex="xyz", at_ms=T0)) is (
        ErrorCode.INVALID_COMMAND
    )
    assert refused(state, ContributeClientSeed(seat=0, seed_hex="00" * 257, at_ms=T0)) is (
        ErrorCode.INVALID_COMMAND
    )


@pytest.mark.parametrize(
    ("seats", "dealer", "accounts"),
    [
        ((0,), 0, None),  # one player
        ((0, 1), 3, None),  # dealer not seated
        ((0, 1), 0, ("a", "a")),  # one account in two seats
        ((0, 4), 0, None),  # no seat 4 at a four-seat table
    ],
)
def test_a_hand_needs_two_seats_distinct_accounts_and_a_seated_dealer(
    seats: tuple[int, ...], dealer: int, accounts: tuple[str, ...] | None
) -> None:
    names = accounts or tuple(f"acct-{s}" for s in seats)
    command = StartHand(
        hand_id="h",
        seats=tuple(SeatAccount(s, a) for s, a in zip(seats, names, strict=True)),
        dealer_seat=dealer,
        rule_set=RULES,
        at_ms=T0,
    )
    assert refused(HandState(), command) is ErrorCode.INVALID_COMMAND


def test_a_rule_set_of_another_variant_is_refused() -> None:
    command = StartHand(
        hand_id="h",
        seats=(SeatAccount(0, "a"), SeatAccount(1, "b")),
        dealer_seat=0,
        rule_set=dataclasses.replace(RULES, variant="gin"),
        at_ms=T0,
    )
    assert refused(HandState(), command) is ErrorCode.INVALID_COMMAND


def test_a_deal_that_does_not_use_each_card_of_the_shoe_once_is_refused() -> None:
    t = table()
    t.start([0, 1], 1, {})
    locked = t.state
    # rebuild the state just before the deal: fold everything but HandDealt and TurnStarted
    before_deal = INDIAN_POINTS.fold(t.events[:-2])
    d = deal(t.inputs(), RULES.shoe, [0, 1], 1, 13)
    assert d.first_open is not None
    duplicated = d.stock[:-1] + (d.stock[0],)
    bad = Deal(
        hands=d.hands, wild_cut=d.wild_cut, first_open=d.first_open, stock=duplicated, at_ms=T0
    )
    assert refused(before_deal, bad) is ErrorCode.INVALID_DEAL
    short = dataclasses.replace(d.hands[0], cards=d.hands[0].cards[:12])
    bad = Deal(
        hands=(short, d.hands[1]),
        wild_cut=d.wild_cut,
        first_open=d.first_open,
        stock=d.stock,
        at_ms=T0,
    )
    assert refused(before_deal, bad) is ErrorCode.INVALID_DEAL
    assert (
        refused(
            locked,
            Deal(
                hands=d.hands, wild_cut=d.wild_cut, first_open=d.first_open, stock=d.stock, at_ms=T0
            ),
        )
        is ErrorCode.WRONG_PHASE
    )


def test_the_seat_after_the_dealer_plays_first_wrapping_past_the_highest_seat() -> None:
    t = table()
    t.start([0, 2, 3], 3, {})
    assert t.state.turn_seat == 0 and t.state.turn_no == 1
    assert INDIAN_POINTS.deadline(t.state) == Deadline(
        DeadlineKind.TURN, 1, t.now_ms + RULES.turn_seconds * 1000
    )


def test_leaving_before_the_deal_aborts_the_hand_and_nothing_else_moves() -> None:
    state = window_open()
    state, events = run(state, LeaveHand(seat=1, at_ms=T0 + 800))
    assert events == (HandAborted(reason="seat 1 left before the deal", at_ms=T0 + 800),)
    assert INDIAN_POINTS.is_over(state) and INDIAN_POINTS.result(state) == events[0]
    assert INDIAN_POINTS.deadline(state) is None
    assert refused(state, AbortHand(reason="again", at_ms=T0)) is ErrorCode.WRONG_PHASE


def test_a_hand_can_be_aborted_mid_play_when_a_service_is_gone() -> None:
    t = table()
    t.start([0, 1], 0, {})
    events = t.run(AbortHand(reason="dealer past its deadline", at_ms=t.tick()))
    assert isinstance(events[0], HandAborted) and INDIAN_POINTS.is_over(t.state)


def test_a_card_outside_the_shoe_cannot_be_dealt() -> None:
    t = table()
    t.start([0, 1], 1, {})
    before_deal = INDIAN_POINTS.fold(t.events[:-2])
    d = deal(t.inputs(), RULES.shoe, [0, 1], 1, 13)
    assert d.first_open is not None
    third_deck = parse_card("AS", copy=2)
    stock = (third_deck, *d.stock[1:])
    bad = Deal(hands=d.hands, wild_cut=d.wild_cut, first_open=d.first_open, stock=stock, at_ms=T0)
    assert refused(before_deal, bad) is ErrorCode.INVALID_DEAL
