"""Rules events <-> table-stream payloads: the one home of that mapping.

The table stream (topic ``table-events``) holds protobuf payloads (``rummy.table.v1`` events, and
the ledger / fairness / dealer payloads the table re-records as facts). The rules library speaks
frozen dataclasses (``rummy_rules.events``, ``rummy_rules.indian.events``). This module turns one
into the other, exactly: ``from_payload(to_payload(e, ctx), ctx) == (e,)`` for every hand event,
so folding the stream through the rules gives the live state byte for byte
(``docs/rules/promises.md#replay-is-exact``).

Conventions:

- cards travel as their index in the hand's shoe (``rummy.common.v1.Card.index``, face for people);
- times inside rules events (``*_ms``) travel as ``google.protobuf.Timestamp`` deadlines, and the
  ``at_ms`` of ``HandStarted`` / ``HandEnded`` / ``HandAborted`` is the envelope's ``occurred_at``
  (the table stamps every envelope with the ``at_ms`` of the command that caused it);
- a ``StakeReserved`` travels as the ledger's ``StakesReserved`` with one reservation,
  ``SeedCommitted`` / ``HandDealt`` / ``StockReshuffled`` as the fairness and dealer payloads
  (the table re-records the other service's payload, see ``rummy/table/v1/events.proto``).

Decoding a hand payload needs the hand's context (its id, rule set, seats), built from its
``HandStarted`` with :func:`hand_context`. Ops' replay tool imports this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Literal, TypeVar

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from rummy.common.v1 import cards_pb2
from rummy.dealer.v1 import events_pb2 as dealer_pb
from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.indian.v1 import rules_pb2 as indian_pb2
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.table.v1 import events_pb2 as pb
from rummy_rules import events as ev
from rummy_rules.cards import Card
from rummy_rules.deck import Shoe
from rummy_rules.events import Event
from rummy_rules.indian import events as indian
from rummy_rules.indian.rules import INDIAN_POINTS_VARIANT, bombay_baazi, indian_rules
from rummy_rules.rules import RuleSet, RuleSetError
from rummy_rules.settlement import Settlement, SettlementLine, reservation_cents
from rummy_rules.shuffle import SeatHand
from rummy_rules.wild import card_points

_T = TypeVar("_T")


class StreamCodecError(ValueError):
    """A payload that cannot be turned into rules events (unknown type, card outside the shoe)."""


# -- rule sets ---------------------------------------------------------------------------------

#: Seconds after the last seat change or hand end before a hand may start, when a table's options
#: leave it out (a table option, not a rule of the hand).
DEFAULT_START_DELAY_SECONDS = 5

_Switch = Literal[
    "jokers_only_group_is_impure_sequence", "card_taken_from_discard_cannot_be_discarded"
]
_Option = (
    _Switch
    | Literal[
        "first_drop_points",
        "middle_drop_points",
        "wrong_declare_points",
        "max_missed_turns",
        "turn_seconds",
        "seed_window_seconds",
    ]
)

#: The on/off options of ``rummy.common.v1.RuleSet`` (explicit presence; on at Bombay Baazi).
SWITCHES: tuple[_Switch, ...] = (
    "jokers_only_group_is_impure_sequence",
    "card_taken_from_discard_cannot_be_discarded",
)


#: The request's name of each rule-set option (``rummy_rules.rules.RuleSetError.option``).
WIRE_OPTION_NAMES = {
    "seats": "seat_count",
    "point_value_cents": "point_value_hundredths",
    "commission_bps": "commission_bps",
    "points_cap": "rule_set.max_points",
    "first_drop_points": "rule_set.first_drop_points",
    "middle_drop_points": "rule_set.middle_drop_points",
    "wrong_declare_points": "rule_set.wrong_declare_points",
    "max_missed_turns": "rule_set.max_missed_turns",
    "turn_seconds": "rule_set.turn_seconds",
    "seed_window_seconds": "rule_set.seed_window_seconds",
    "start_delay_seconds": "rule_set.start_delay_seconds",
    "variant": "rule_set.variant",
}


def wire_message(error: RuleSetError) -> str:
    """The rules' refusal of an option, naming the request field (``rule_set.first_drop_points
    must be 0..130 (...), got 150``)."""
    return error.describe(WIRE_OPTION_NAMES.get(error.option, error.option))


def rule_set_from_pb(
    options: cards_pb2.RuleSet, seats: int, point_value_cents: int, commission_bps: int
) -> RuleSet:
    """The rules library's rule set for a table's options (``rummy.common.v1.RuleSet``).

    An option left out is the Bombay Baazi rule (``rummy_rules.rules.bombay_baazi``): variant
    ``indian-points``, first drop 20, middle drop 40, wrong declare 80 points, uncapped
    (``max_points`` 0), 3 missed turns, a jokers-only group an impure sequence, the card taken from
    the discard pile not discardable in that turn, 30 s a turn, a 5 s seed window; an option set
    is taken as it is, zero included. ``point_value_cents`` in hundredths of a House Token a point,
    ``commission_bps`` in basis points. Only the ``indian-points`` variant exists. Raises
    RuleSetError (a ValueError) for an unknown variant or any value the rules' validation refuses
    (e.g. a seat count other than 4, 6, 8, a turn of 0 s, a penalty above the most a hand can
    cost); :func:`wire_message` names the request field.
    """
    options, conflict = _with_variant_options(options)
    variant = options.variant if options.HasField("variant") else INDIAN_POINTS_VARIANT
    if variant != INDIAN_POINTS_VARIANT:
        raise RuleSetError("variant", repr(INDIAN_POINTS_VARIANT), "another variant")
    house = bombay_baazi(seats, point_value_cents, commission_bps)
    default = indian_rules(house)

    def given(name: _Option, default: _T) -> _T:
        value: _T = getattr(options, name) if options.HasField(name) else default
        return value

    options_given = replace(
        default,
        first_drop_points=given("first_drop_points", default.first_drop_points),
        middle_drop_points=given("middle_drop_points", default.middle_drop_points),
        wrong_declare_points=given("wrong_declare_points", default.wrong_declare_points),
        points_cap=options.max_points or None,
        meld_options=replace(
            default.meld_options,
            jokers_only_group_is_sequence=given(
                "jokers_only_group_is_impure_sequence",
                default.meld_options.jokers_only_group_is_sequence,
            ),
        ),
        no_discard_of_card_taken_from_pile=given(
            "card_taken_from_discard_cannot_be_discarded",
            default.no_discard_of_card_taken_from_pile,
        ),
    )
    rules = replace(
        house,
        variant=variant,
        max_missed_turns=given("max_missed_turns", house.max_missed_turns),
        turn_seconds=given("turn_seconds", house.turn_seconds),
        seed_window_seconds=given("seed_window_seconds", house.seed_window_seconds),
        options=options_given,
    )
    if conflict:
        raise RuleSetError(
            f"rule_set.indian_points.{conflict}",
            f"equal to rule_set.{conflict} when both are set",
            "a different value",
        )
    return rules


def _with_variant_options(options: cards_pb2.RuleSet) -> tuple[cards_pb2.RuleSet, str]:
    """``options`` read with its ``variant_options`` (``indian_points``): each Indian option is the
    flat field when set (every record written before the oneof existed has only those), else the
    oneof's; and the first option set in both to different values (``""``: none), which the
    caller refuses once the options are otherwise valid."""
    if options.WhichOneof("variant_options") != "indian_points":
        return options, ""
    merged = cards_pb2.RuleSet()
    merged.CopyFrom(options)
    merged.ClearField("variant_options")
    given, conflict = options.indian_points, ""
    for field in indian_pb2.IndianPointsOptions.DESCRIPTOR.fields:
        name = field.name
        in_oneof = given.HasField(name) if field.has_presence else bool(getattr(given, name))
        in_flat = options.HasField(name) if field.has_presence else bool(getattr(options, name))
        if in_oneof and not in_flat:
            setattr(merged, name, getattr(given, name))
        elif in_oneof and getattr(given, name) != getattr(options, name) and not conflict:
            conflict = name
    return merged, conflict


def recorded_rule_set_from_pb(
    options: cards_pb2.RuleSet, seats: int, point_value_cents: int, commission_bps: int
) -> RuleSet:
    """The rule set a recorded ``TableOpened`` or ``HandStarted`` carries, as it was played.

    Every writer since explicit presence sets every option, so an option missing from a record
    was written before it, by a writer that left out proto3 zeros: a switch (``SWITCHES``) missing
    there was off, and the hands of that table were played so. Every other missing option is read
    as by :func:`rule_set_from_pb` (those writers never wrote a zero for them). Raises RuleSetError
    as :func:`rule_set_from_pb`.
    """
    as_written = cards_pb2.RuleSet()
    as_written.CopyFrom(options)
    for name in SWITCHES:
        if not as_written.HasField(name):
            setattr(as_written, name, False)
    return rule_set_from_pb(as_written, seats, point_value_cents, commission_bps)


def start_delay_seconds_from_pb(options: cards_pb2.RuleSet) -> int:
    """A table's start delay in seconds: the option, or ``DEFAULT_START_DELAY_SECONDS`` when left
    out (an explicit 0 starts a hand as soon as enough players are seated)."""
    if options.HasField("start_delay_seconds"):
        return options.start_delay_seconds
    return DEFAULT_START_DELAY_SECONDS


def rule_set_to_pb(rules: RuleSet, start_delay_seconds: int | None) -> cards_pb2.RuleSet:
    """The wire options of ``rules``, every option set (so a record never depends on defaults);
    inverse of :func:`rule_set_from_pb`. ``start_delay_seconds`` None leaves the start delay out
    (a hand's ``HandStarted`` does not carry the table's start delay). The Indian options are
    written twice, equal: in ``variant_options.indian_points`` and in the flat fields that a
    reader of a version before the oneof reads (it skips the oneof as an unknown field)."""
    played = indian_rules(rules)
    indian_options = indian_pb2.IndianPointsOptions(
        max_points=played.points_cap or 0,
        first_drop_points=played.first_drop_points,
        middle_drop_points=played.middle_drop_points,
        wrong_declare_points=played.wrong_declare_points,
        jokers_only_group_is_impure_sequence=played.meld_options.jokers_only_group_is_sequence,
        card_taken_from_discard_cannot_be_discarded=played.no_discard_of_card_taken_from_pile,
    )
    options = cards_pb2.RuleSet(
        variant=rules.variant,
        max_missed_turns=rules.max_missed_turns,
        turn_seconds=rules.turn_seconds,
        seed_window_seconds=rules.seed_window_seconds,
        indian_points=indian_options,
    )
    for field in indian_pb2.IndianPointsOptions.DESCRIPTOR.fields:
        setattr(options, field.name, getattr(indian_options, field.name))
    if start_delay_seconds is not None:
        options.start_delay_seconds = start_delay_seconds
    return options


# -- small values ------------------------------------------------------------------------------


def ms_to_timestamp(ms: int) -> Timestamp:
    ts = Timestamp()
    ts.FromMilliseconds(ms)
    return ts


def timestamp_to_ms(ts: Timestamp) -> int:
    return int(ts.ToMilliseconds())


def ms_to_datetime(ms: int) -> datetime:
    """Milliseconds since the epoch -> an aware UTC datetime (exact)."""
    return datetime.fromtimestamp(ms // 1000, UTC).replace(microsecond=(ms % 1000) * 1000)


def datetime_to_ms(at: datetime) -> int:
    """An aware datetime -> whole milliseconds since the epoch (exact for ms-stamped times)."""
    delta = at - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def card_to_pb(card: Card, shoe: Shoe) -> cards_pb2.Card:
    return cards_pb2.Card(index=shoe.card_to_index(card), face=card.face)


def card_from_pb(card: cards_pb2.Card, shoe: Shoe) -> Card:
    """The card at the wire card's index. Raises StreamCodecError if it is outside the shoe."""
    try:
        return shoe.index_to_card(card.index)
    except (ValueError, IndexError) as exc:
        raise StreamCodecError(f"card index {card.index} is not in the shoe: {exc}") from None


def _cards(cards: tuple[Card, ...], shoe: Shoe) -> list[cards_pb2.Card]:
    return [card_to_pb(c, shoe) for c in cards]


def _uncards(cards: object, shoe: Shoe) -> tuple[Card, ...]:
    return tuple(card_from_pb(c, shoe) for c in cards)  # type: ignore[attr-defined]


def shoe_pb(shoe: Shoe) -> cards_pb2.ShoeSpec:
    return cards_pb2.ShoeSpec(decks=shoe.decks, printed_jokers=shoe.printed_jokers)


_DRAW_SOURCE = {
    ev.DrawSource.STOCK: pb.DRAW_SOURCE_STOCK,
    ev.DrawSource.DISCARD_PILE: pb.DRAW_SOURCE_DISCARD_PILE,
}
_DRAW_SOURCE_BACK = {v: k for k, v in _DRAW_SOURCE.items()}
DROP_KIND_TO_PB = {
    indian.DropKind.FIRST: pb.DROP_KIND_FIRST,
    indian.DropKind.MIDDLE: pb.DROP_KIND_MIDDLE,
    indian.DropKind.TIMEOUT: pb.DROP_KIND_TIMEOUT,
    indian.DropKind.LEAVE: pb.DROP_KIND_LEAVE,
}
_DROP_KIND_BACK = {v: k for k, v in DROP_KIND_TO_PB.items()}


# -- the hand's context ------------------------------------------------------------------------


@dataclass(frozen=True)
class HandContext:
    """What decoding a hand's payloads needs: its id, number, rule set and seats (seat ->
    account id), from its HandStarted."""

    hand_id: str
    hand_no: int
    rule_set: RuleSet
    accounts: Mapping[int, str]
    dealer_seat: int

    @property
    def shoe(self) -> Shoe:
        return self.rule_set.shoe


def hand_context(started: pb.HandStarted) -> HandContext:
    """The context of the hand ``started`` begins. Raises ValueError for refused options."""
    rules = recorded_rule_set_from_pb(
        started.rule_set,
        started.seat_count,
        started.point_value_hundredths,
        started.commission_bps,
    )
    return HandContext(
        started.hand_id,
        started.hand_no,
        rules,
        {s.seat: s.account_id for s in started.seats},
        started.dealer_seat,
    )


# -- encoding ----------------------------------------------------------------------------------


def hand_started_to_pb(e: ev.HandStarted, hand_no: int) -> pb.HandStarted:
    """The HandStarted payload with what ledger (reservation per seat), fairness and dealer (rule
    set, shoe, seats) need."""
    rules = e.rule_set
    return pb.HandStarted(
        hand_id=e.hand_id,
        hand_no=hand_no,
        seats=[cards_pb2.Seat(seat=s.seat, account_id=s.account_id) for s in e.seats],
        dealer_seat=e.dealer_seat,
        rule_set=rule_set_to_pb(rules, None),
        point_value_hundredths=rules.point_value_cents,
        commission_bps=rules.commission_bps,
        shoe=shoe_pb(rules.shoe),
        reservation_hundredths=reservation_cents(rules),
        seat_count=rules.seats,
    )


def to_payload(  # noqa: C901 - one branch per event type
    event: Event,
    ctx: HandContext,
    *,
    top_discard: Card | None = None,
    automatic: bool = False,
    wild_cut: Card | None = None,
) -> Message:
    """The table-stream payload of a rules event of hand ``ctx`` (not HandStarted: see
    :func:`hand_started_to_pb`). ``top_discard``: the discard pile's top after a StockExhausted;
    ``automatic``: a draw or discard played for a timed-out seat; ``wild_cut``: the hand's cut card
    (for deadwood points in a HandEnded). Raises StreamCodecError for an unknown event."""
    shoe, hand_id = ctx.shoe, ctx.hand_id
    if isinstance(event, ev.StakeReserved):
        return ledger_pb.StakesReserved(
            hand_id=hand_id,
            reservations=[
                ledger_pb.Reservation(
                    seat=event.seat,
                    account_id=ctx.accounts.get(event.seat, ""),
                    amount_hundredths=event.amount_cents,
                )
            ],
        )
    if isinstance(event, ev.SeedCommitted):
        return fairness_pb.SeedCommitted(
            hand_id=hand_id, commitment_sha256=bytes.fromhex(event.commitment)
        )
    if isinstance(event, ev.SeedWindowOpened):
        return pb.SeedWindowOpened(hand_id=hand_id, deadline=ms_to_timestamp(event.deadline_ms))
    if isinstance(event, ev.ClientSeedContributed):
        return pb.ClientSeedContributed(
            hand_id=hand_id, seat=event.seat, client_seed=bytes.fromhex(event.seed_hex)
        )
    if isinstance(event, ev.SeedsLocked):
        return pb.SeedsLocked(
            hand_id=hand_id,
            server_commitment_sha256=bytes.fromhex(event.commitment),
            client_seeds=[
                pb.ClientSeed(seat=s.seat, client_seed=bytes.fromhex(s.seed_hex))
                for s in event.client_seeds
            ],
            dealer_seat=ctx.dealer_seat,
            shoe=shoe_pb(shoe),
            hand_size=ctx.rule_set.hand_size,
            variant=ctx.rule_set.variant,
        )
    if isinstance(event, ev.HandDealt):
        return dealer_pb.HandDealt(
            hand_id=hand_id,
            hands=[
                dealer_pb.SeatHand(seat=h.seat, cards=_cards(h.cards, shoe)) for h in event.hands
            ],
            wild_cut=card_to_pb(event.wild_cut, shoe) if event.wild_cut is not None else None,
            first_open=card_to_pb(event.first_open, shoe),
            stock=_cards(event.stock, shoe),
        )
    if isinstance(event, ev.TurnStarted):
        return pb.TurnStarted(
            hand_id=hand_id,
            seat=event.seat,
            turn_no=event.turn_no,
            deadline=ms_to_timestamp(event.deadline_ms),
        )
    if isinstance(event, ev.CardDrawn):
        assert event.card is not None, "the table stream holds unredacted draws"
        return pb.CardDrawn(
            hand_id=hand_id,
            seat=event.seat,
            turn_no=event.turn_no,
            source=_DRAW_SOURCE[event.source],
            card=card_to_pb(event.card, shoe),
            automatic=automatic,
        )
    if isinstance(event, ev.CardDiscarded):
        return pb.CardDiscarded(
            hand_id=hand_id,
            seat=event.seat,
            turn_no=event.turn_no,
            card=card_to_pb(event.card, shoe),
            automatic=automatic,
        )
    if isinstance(event, ev.TurnTimedOut):
        return pb.TurnTimedOut(
            hand_id=hand_id,
            seat=event.seat,
            turn_no=event.turn_no,
            misses_in_a_row=event.misses_in_a_row,
        )
    if isinstance(event, ev.StockExhausted):
        return pb.StockExhausted(
            hand_id=hand_id,
            turn_no=event.turn_no,
            reshuffle_no=event.reshuffle_no,
            cards=_cards(event.cards, shoe),
            top_discard=card_to_pb(top_discard, shoe) if top_discard is not None else None,
            shoe=shoe_pb(shoe),
        )
    if isinstance(event, ev.StockReshuffled):
        return dealer_pb.StockReshuffled(
            hand_id=hand_id,
            reshuffle_no=event.reshuffle_no,
            stock=_cards(event.stock, shoe),
            kept_top_discard=card_to_pb(top_discard, shoe) if top_discard is not None else None,
        )
    if isinstance(event, indian.PlayerDropped):
        return pb.PlayerDropped(
            hand_id=hand_id,
            seat=event.seat,
            turn_no=event.turn_no,
            kind=DROP_KIND_TO_PB[event.kind],
            points=event.points,
        )
    if isinstance(event, indian.Declared):
        return pb.Declared(
            hand_id=hand_id,
            seat=event.seat,
            turn_no=event.turn_no,
            face_down=card_to_pb(event.face_down, shoe),
            shown=_cards(event.shown, shoe),
        )
    if isinstance(event, indian.DeclarationRejected):
        return pb.DeclarationRejected(
            hand_id=hand_id,
            seat=event.seat,
            turn_no=event.turn_no,
            face_down=card_to_pb(event.face_down, shoe),
            shown=_cards(event.shown, shoe),
            points=event.points,
            reason="the shown cards do not make a valid declaration under their best arrangement",
        )
    if isinstance(event, ev.HandEnded):
        return hand_ended_to_pb(event, ctx, wild_cut)
    if isinstance(event, ev.HandAborted):
        return pb.HandAborted(hand_id=hand_id, reason=event.reason)
    raise StreamCodecError(f"{type(event).__name__} has no table-stream payload")


def hand_ended_to_pb(
    e: ev.HandEnded, ctx: HandContext, wild_cut: Card | None = None
) -> pb.HandEnded:
    """Every seat's result and the money, as GetHandResult and the ledger see them."""
    shoe = ctx.shoe
    wild_rank = None if wild_cut is None else wild_cut.rank
    s = e.settlement
    return pb.HandEnded(
        hand_id=ctx.hand_id,
        winner_seat=e.winner_seat,
        results=[
            pb.SeatResult(
                seat=r.seat,
                account_id=r.account_id,
                outcome=r.outcome,
                points=r.points,
                cards=_cards(r.cards, shoe),
                arrangement=cards_pb2.Arrangement(
                    melds=[
                        cards_pb2.Meld(kind=m.kind, cards=_cards(m.cards, shoe)) for m in r.melds
                    ],
                    deadwood=_cards(r.deadwood, shoe),
                    deadwood_points=sum(card_points(c, wild_rank) for c in r.deadwood),
                ),
            )
            for r in e.results
        ],
        settlement=[
            pb.SettlementLine(
                seat=line.seat,
                account_id=ctx.accounts.get(line.seat, ""),
                points=line.points,
                amount_hundredths=line.amount_cents,
            )
            for line in s.lines
        ],
        commission_hundredths=s.commission_cents,
        point_value_hundredths=s.point_value_cents,
        commission_bps=s.commission_bps,
        co_winner_seats=s.co_winner_seats,
    )


# -- decoding ----------------------------------------------------------------------------------


def hand_started_from_pb(started: pb.HandStarted, at_ms: int) -> ev.HandStarted:
    ctx = hand_context(started)
    return ev.HandStarted(
        hand_id=started.hand_id,
        seats=tuple(ev.SeatAccount(s.seat, s.account_id) for s in started.seats),
        dealer_seat=started.dealer_seat,
        rule_set=ctx.rule_set,
        at_ms=at_ms,
    )


#: Payload types that carry a hand's rules events (besides HandStarted).
HAND_PAYLOADS: frozenset[type[Message]] = frozenset(
    {
        ledger_pb.StakesReserved,
        fairness_pb.SeedCommitted,
        pb.SeedWindowOpened,
        pb.ClientSeedContributed,
        pb.SeedsLocked,
        dealer_pb.HandDealt,
        pb.TurnStarted,
        pb.CardDrawn,
        pb.CardDiscarded,
        pb.TurnTimedOut,
        pb.StockExhausted,
        dealer_pb.StockReshuffled,
        pb.PlayerDropped,
        pb.Declared,
        pb.DeclarationRejected,
        pb.HandEnded,
        pb.HandAborted,
    }
)


def from_payload(payload: Message, ctx: HandContext, at_ms: int) -> tuple[Event, ...]:  # noqa: C901
    """The rules events a hand payload of hand ``ctx`` stands for (``at_ms``: the envelope's
    occurred-at). Raises StreamCodecError for a payload that is not a hand event."""
    shoe = ctx.shoe
    if isinstance(payload, ledger_pb.StakesReserved):
        return tuple(
            ev.StakeReserved(seat=r.seat, amount_cents=r.amount_hundredths)
            for r in payload.reservations
        )
    if isinstance(payload, fairness_pb.SeedCommitted):
        return (ev.SeedCommitted(commitment=payload.commitment_sha256.hex()),)
    if isinstance(payload, pb.SeedWindowOpened):
        return (ev.SeedWindowOpened(deadline_ms=timestamp_to_ms(payload.deadline)),)
    if isinstance(payload, pb.ClientSeedContributed):
        return (ev.ClientSeedContributed(seat=payload.seat, seed_hex=payload.client_seed.hex()),)
    if isinstance(payload, pb.SeedsLocked):
        return (
            ev.SeedsLocked(
                commitment=payload.server_commitment_sha256.hex(),
                client_seeds=tuple(
                    ev.SeatSeed(s.seat, s.client_seed.hex()) for s in payload.client_seeds
                ),
            ),
        )
    if isinstance(payload, dealer_pb.HandDealt):
        stock = _uncards(payload.stock, shoe)
        return (
            ev.HandDealt(
                hands=tuple(
                    SeatHand(h.seat, _uncards(h.cards, shoe))
                    for h in sorted(payload.hands, key=lambda h: h.seat)
                ),
                wild_cut=card_from_pb(payload.wild_cut, shoe)
                if payload.HasField("wild_cut")
                else None,
                first_open=card_from_pb(payload.first_open, shoe),
                stock=stock,
                stock_count=len(stock),
            ),
        )
    if isinstance(payload, pb.TurnStarted):
        return (
            ev.TurnStarted(
                seat=payload.seat,
                turn_no=payload.turn_no,
                deadline_ms=timestamp_to_ms(payload.deadline),
            ),
        )
    if isinstance(payload, pb.CardDrawn):
        return (
            ev.CardDrawn(
                seat=payload.seat,
                turn_no=payload.turn_no,
                source=_DRAW_SOURCE_BACK[payload.source],
                card=card_from_pb(payload.card, shoe),
            ),
        )
    if isinstance(payload, pb.CardDiscarded):
        return (
            ev.CardDiscarded(
                seat=payload.seat, turn_no=payload.turn_no, card=card_from_pb(payload.card, shoe)
            ),
        )
    if isinstance(payload, pb.TurnTimedOut):
        return (
            ev.TurnTimedOut(
                seat=payload.seat, turn_no=payload.turn_no, misses_in_a_row=payload.misses_in_a_row
            ),
        )
    if isinstance(payload, pb.StockExhausted):
        return (
            ev.StockExhausted(
                turn_no=payload.turn_no,
                reshuffle_no=payload.reshuffle_no,
                cards=_uncards(payload.cards, shoe),
            ),
        )
    if isinstance(payload, dealer_pb.StockReshuffled):
        stock = _uncards(payload.stock, shoe)
        return (
            ev.StockReshuffled(
                reshuffle_no=payload.reshuffle_no, stock=stock, stock_count=len(stock)
            ),
        )
    if isinstance(payload, pb.PlayerDropped):
        return (
            indian.PlayerDropped(
                seat=payload.seat,
                turn_no=payload.turn_no,
                kind=_DROP_KIND_BACK[payload.kind],
                points=payload.points,
            ),
        )
    if isinstance(payload, pb.Declared):
        return (
            indian.Declared(
                seat=payload.seat,
                turn_no=payload.turn_no,
                face_down=card_from_pb(payload.face_down, shoe),
                shown=_uncards(payload.shown, shoe),
            ),
        )
    if isinstance(payload, pb.DeclarationRejected):
        return (
            indian.DeclarationRejected(
                seat=payload.seat,
                turn_no=payload.turn_no,
                face_down=card_from_pb(payload.face_down, shoe),
                shown=_uncards(payload.shown, shoe),
                points=payload.points,
            ),
        )
    if isinstance(payload, pb.HandEnded):
        return (hand_ended_from_pb(payload, ctx, at_ms),)
    if isinstance(payload, pb.HandAborted):
        return (ev.HandAborted(reason=payload.reason, at_ms=at_ms),)
    raise StreamCodecError(f"{type(payload).DESCRIPTOR.full_name} is not a hand event")


def hand_ended_from_pb(payload: pb.HandEnded, ctx: HandContext, at_ms: int) -> ev.HandEnded:
    shoe = ctx.shoe
    return ev.HandEnded(
        winner_seat=payload.winner_seat,
        results=tuple(
            ev.SeatResult(
                seat=r.seat,
                account_id=r.account_id,
                outcome=r.outcome,
                points=r.points,
                cards=_uncards(r.cards, shoe),
                melds=tuple(
                    ev.ScoredGroup(m.kind, _uncards(m.cards, shoe)) for m in r.arrangement.melds
                ),
                deadwood=_uncards(r.arrangement.deadwood, shoe),
            )
            for r in payload.results
        ),
        settlement=Settlement(
            winner_seat=payload.winner_seat,
            point_value_cents=payload.point_value_hundredths,
            commission_bps=payload.commission_bps,
            lines=tuple(
                SettlementLine(line.seat, line.points, line.amount_hundredths)
                for line in payload.settlement
            ),
            commission_cents=payload.commission_hundredths,
            co_winner_seats=tuple(payload.co_winner_seats),
        ),
        at_ms=at_ms,
    )
