"""Hands of any variant dealt from a script and recorded as the table writes them: the payloads
(``rummy_game.hand_payloads``, the step the table service and replay share) and the envelopes of
the table stream. Two hands worked by hand for the tests of what a seat's deadwood is worth: a
gin knock (:func:`gin_knock`) and a Rummy 500 round (:func:`rummy500_round`). Not a test
module."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message

from rummy.table.v1 import events_pb2 as pb
from rummy_game import stream_payloads
from rummy_game.hand_payloads import hand_payloads
from rummy_game.variant_wire import HandContext
from rummy_platform.envelope import Envelope
from rummy_rules import commands as cmd
from rummy_rules import registry
from rummy_rules.cards import parse_card, parse_cards
from rummy_rules.events import HandStarted, SeatAccount
from rummy_rules.gin.hand import GinKnock, GinPassUpcard
from rummy_rules.gin.rules import gin_rule_set
from rummy_rules.rules import RuleSet
from rummy_rules.rummy500.play import Rummy500Meld
from rummy_rules.rummy500.rules import rummy500_rule_set
from rummy_rules.shuffle import SeatHand
from rummy_rules.variant import Variant

from .events import table_event

T0 = 1_700_000_000_000
#: A move of a script: (the hand's state, its seat on turn, the turn number) -> the command.
Move = Callable[[Any, int, int], cmd.Command]


@dataclass(frozen=True)
class Recorded:
    """A scripted hand as the table recorded it: its context, its HandStarted payload and every
    payload after it, in order."""

    ctx: HandContext
    started: pb.HandStarted
    payloads: tuple[Message, ...]

    @property
    def ended(self) -> pb.HandEnded:
        """The hand's one HandEnded payload."""
        (ended,) = [p for p in self.payloads if isinstance(p, pb.HandEnded)]
        assert isinstance(ended, pb.HandEnded)
        return ended

    def envelopes(self, table_id: str = "table-scripted") -> list[Envelope]:
        """The hand on ``table_id``'s stream from version 1, every envelope stamped ``T0``."""
        at = stream_payloads.ms_to_datetime(T0)
        label = f"{self.ctx.rule_set.name}/{self.ctx.rule_set.version}"
        return [
            table_event(table_id, k, p, occurred_at=at, rules_version=label)
            for k, p in enumerate((self.started, *self.payloads), start=1)
        ]


def played(
    rule_set: RuleSet,
    dealer: int,
    hands: dict[int, str],
    upcard: str,
    stock: str,
    moves: Sequence[Move],
) -> Recorded:
    """A hand of ``rule_set`` (a variant without a wild cut) dealt ``hands`` (seat -> cards),
    ``upcard`` and ``stock`` (drawn from the left; the rest of the shoe follows it) after the
    stakes, the commitment and an empty seed of every seat, then played by ``moves``, each given
    the state, the seat on turn and the turn number (``state.play``'s: gin's and Rummy 500's).
    Raises RuleViolation when the rules refuse a move."""
    variant: Variant[Any] = registry.lookup(rule_set.variant)
    seats = tuple(sorted(hands))
    (started,) = variant.decide(
        variant.initial_state(),
        cmd.StartHand(
            hand_id="h-scripted",
            seats=tuple(SeatAccount(s, f"acct-{s}") for s in seats),
            dealer_seat=dealer,
            rule_set=rule_set,
            at_ms=T0,
        ),
    )
    assert isinstance(started, HandStarted)
    started_pb = stream_payloads.hand_started_to_pb(started, 1)
    ctx = stream_payloads.hand_context(started_pb)
    dealt = {s: parse_cards(c) for s, c in hands.items()}
    top = [parse_card(upcard), *parse_cards(stock)]
    used = {c for cards in dealt.values() for c in cards} | set(top)
    setup: list[cmd.Command] = [
        *(cmd.RecordStakeReserved(seat=s, amount_hundredths=0, at_ms=T0) for s in seats),
        cmd.RecordSeedCommitment(commitment="ab" * 32, at_ms=T0),
        *(cmd.ContributeClientSeed(seat=s, seed_hex="", at_ms=T0) for s in seats),
        cmd.Deal(
            hands=tuple(SeatHand(s, dealt[s]) for s in seats),
            wild_cut=None,
            first_open=top[0],
            stock=(*top[1:], *(c for c in rule_set.shoe.cards if c not in used)),
            at_ms=T0,
        ),
    ]
    out = hand_payloads(variant, variant.apply(variant.initial_state(), started), ctx, setup)
    for move in moves:
        state = out[-1][1]
        command = move(state, state.play.turn_seat, state.play.turn_no)
        out += hand_payloads(variant, state, ctx, [command])
    return Recorded(ctx, started_pb, tuple(p for p, _ in out))


#: The knocker's ten cards: A-2-3C, the 4s, 7-8-9S melded, AD loose.
GIN_KNOCKER = "AC 2C 3C 4D 4H 4S 7S 8S 9S AD"
#: The defender's: 5-6-7D melded; nothing lays off on the knocker's melds (no 4C, 6S or 10S).
GIN_DEFENDER = "AH AS KC KD QS JH 9H 5D 6D 7D"


def gin_knock(oklahoma: bool = False) -> Recorded:
    """A gin (or Oklahoma) hand: seat 0 (the non-dealer) and then the dealer pass the upcard QH;
    seat 0 draws 5H, lays it face down and knocks with :data:`GIN_KNOCKER` (AD loose) against
    :data:`GIN_DEFENDER`."""
    return played(
        gin_rule_set(oklahoma=oklahoma),
        dealer=1,
        hands={0: GIN_KNOCKER, 1: GIN_DEFENDER},
        upcard="QH",
        stock="5H",
        moves=[
            lambda state, seat, turn_no: GinPassUpcard(seat=seat, turn_no=turn_no, at_ms=T0),
            lambda state, seat, turn_no: GinPassUpcard(seat=seat, turn_no=turn_no, at_ms=T0),
            lambda state, seat, turn_no: cmd.DrawFromStock(seat=seat, turn_no=turn_no, at_ms=T0),
            lambda state, seat, turn_no: GinKnock(
                seat=seat, turn_no=turn_no, face_down=parse_card("5H"), at_ms=T0
            ),
        ],
    )


#: Seat 0's seven cards, left in its hand when seat 1 goes out.
RUMMY500_HELD = "AH AS KC QD 5D 6H 2S"


def rummy500_round(low_ace_one: bool = False) -> Recorded:
    """A two-seat Rummy 500 round (seat 0 deals): seat 1 draws 10C, melds 7-8-9-10C and the three
    4s and goes out by discarding KH; seat 0 still holds :data:`RUMMY500_HELD`."""
    return played(
        rummy500_rule_set(2, low_ace_one=low_ace_one),
        dealer=0,
        hands={0: RUMMY500_HELD, 1: "7C 8C 9C 4D 4H 4S KH"},
        upcard="3D",
        stock="10C",
        moves=[
            lambda state, seat, turn_no: cmd.DrawFromStock(seat=seat, turn_no=turn_no, at_ms=T0),
            lambda state, seat, turn_no: Rummy500Meld(
                seat=seat,
                turn_no=turn_no,
                groups=(parse_cards("7C 8C 9C 10C"), parse_cards("4D 4H 4S")),
                at_ms=T0,
            ),
            lambda state, seat, turn_no: cmd.Discard(
                seat=seat, turn_no=turn_no, card=parse_card("KH"), at_ms=T0
            ),
        ],
    )
