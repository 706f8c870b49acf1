"""What a variant maps to the wire itself: the :class:`VariantWire` protocol, and the small values
every mapping shares (a hand's context, cards as shoe indices).

The table stream's generic mapping (seating, HandStarted, seeds, the deal, turns, draws and
discards, HandEnded / HandAborted, the ledger / fairness / dealer facts) is
:mod:`rummy_game.stream_payloads`'s. Each variant's own events (in its proto package, e.g.
``rummy.indian.v1``), its arm of ``rummy.common.v1.RuleSet.variant_options``, its commands (sent
packed in ``rummy.table.v1.PlayRequest.command``) and their answers map through its
:class:`VariantWire`, found by the hand's pinned variant name in :mod:`rummy_game.variant_wires`
(one line per variant).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from google.protobuf import any_pb2
from google.protobuf.message import Message

from rummy.common.v1 import cards_pb2
from rummy_rules.cards import Card
from rummy_rules.commands import Command
from rummy_rules.deck import Shoe
from rummy_rules.events import Event
from rummy_rules.rules import RuleSet, RuleSetError


class StreamPayloadError(ValueError):
    """A payload that cannot be turned into rules events (unknown type, card outside the shoe),
    or a command message the hand's variant does not play or that does not parse."""


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


class VariantWire(Protocol):
    """One variant's wire mapping.

    - ``variant``: the variant's name (``RuleSet.variant``, ``rummy_rules.registry``);
    - ``event_types``: the payload messages of its own hand events (table stream);
    - ``command_types``: the messages a client packs in ``PlayRequest.command``;
    - ``option_names``: its options' names in ``rummy_rules`` -> the request field that sets
      them (``"first_drop_points"`` -> ``"rule_set.first_drop_points"``), for error messages.
    """

    variant: str
    event_types: tuple[type[Message], ...]
    command_types: tuple[type[Message], ...]
    option_names: Mapping[str, str]

    def options_from_pb(self, options: cards_pb2.RuleSet, house: RuleSet) -> RuleSet:
        """``house`` (the variant's house rule set, the generic options already applied) with
        the variant's own options as ``options`` gives them (an option left out keeps the house
        rule). Raises RuleSetError naming the option."""
        ...

    def upcast_options(
        self, options: cards_pb2.RuleSet, house: RuleSet | None
    ) -> cards_pb2.RuleSet:
        """A recorded rule set of this variant in today's shape, exactly as today's writer
        (:meth:`options_to_pb`) writes the rule set it decodes to (a writer of an older version
        may have left proto3 zeros out, or written the variant's options elsewhere); ``house``:
        the variant's house rule set at the record's seat count (None: that seat count has
        none), for an option the old shape left to the house. A copy when something changed,
        else ``options`` itself; called by :func:`rummy_game.upcast.rule_set` only. Never
        raises."""
        ...

    def options_to_pb(self, rules: RuleSet, out: cards_pb2.RuleSet) -> None:
        """Write the variant's options of ``rules`` into ``out`` (its arm of
        ``variant_options``), every option set; inverse of :meth:`options_from_pb`."""
        ...

    def event_to_pb(self, event: Event, ctx: HandContext) -> Message | None:
        """The payload of one of the variant's own events; None for an event it does not own."""
        ...

    def event_from_pb(self, payload: Message, ctx: HandContext) -> tuple[Event, ...]:
        """The rules events a payload of ``event_types`` stands for. Raises StreamPayloadError."""
        ...

    def command(self, message: Message, seat: int, turn_no: int, at_ms: int, shoe: Shoe) -> Command:
        """The rules command ``message`` (one of ``command_types``) is for ``seat`` at turn
        ``turn_no``, its cards of the hand's ``shoe``. Raises StreamPayloadError for a malformed
        message (a card outside the shoe)."""
        ...

    def command_to_pb(self, command: Command, shoe: Shoe) -> Message | None:
        """The message of one of the variant's own commands (inverse of :meth:`command`: what a
        client packs in ``PlayRequest.command``, e.g. a legal move of the view); None for a
        command it does not own (draws and discards are the generic RPCs')."""
        ...

    def replay_command(self, event: Event, at_ms: int) -> Command | None:
        """For replay: the command one of the variant's own events answers (its input), or
        None for an event the rules derive from another (or not the variant's)."""
        ...

    def answer(self, message: Message, payloads: Sequence[Message]) -> Message | None:
        """The answer to command ``message`` from the payloads it caused (None: none)."""
        ...

    def request_command(self, request: Message) -> Message | None:
        """The command message of an older per-command RPC's request (the Indian variant:
        ``DeclareRequest``, ``DropRequest``); None when the variant plays no such command."""
        ...

    def request_answer(self, request: Message, answer: Message | None) -> Message | None:
        """That older RPC's response for :meth:`answer`'s ``answer``; None as above."""
        ...

    def unpack_answer(self, packed: any_pb2.Any) -> Message | None:
        """``PlayResponse.answer`` as the variant's answer message; None for a type it has
        not."""
        ...

    def accepted(self, answer: Message) -> bool:
        """Whether an answer says the command did what it asked (False: the Indian wrong
        declare)."""
        ...

    def view_to_pb(self, view: object, shoe: Shoe) -> Message | None:
        """The message of the variant's own part of a seat's view (``PlayerView.variant_view``
        of ``rummy_rules.view``, which the variant has already held to the seat's privacy), its
        cards of ``shoe``; None when the variant puts none on the wire."""
        ...

    def metric(self, payload: Message) -> tuple[str, str] | None:
        """The table metric a payload of ``event_types`` counts, as (metric, label): e.g.
        ``("declares", "valid")``, ``("drops", "first")``; None when it counts none."""
        ...


# -- options -------------------------------------------------------------------------------------

_T = TypeVar("_T")
_M = TypeVar("_M", bound=Message)


def packed_options(options: cards_pb2.RuleSet, message: _M) -> _M | None:
    """The variant's own options a rule set packs in ``variant_options.other_variant``, read
    into ``message`` (an empty message of the variant's options type); None when the rule set
    sends no variant options (the house rules). Raises RuleSetError for another arm or type."""
    arm = options.WhichOneof("variant_options")
    if arm is None:
        return None
    if arm != "other_variant" or not options.other_variant.Unpack(message):
        name = type(message).DESCRIPTOR.full_name
        raise RuleSetError("rule_set.variant_options", f"a {name}", arm)
    return message


def given(options: Message, name: str, default: _T) -> _T:
    """Option ``name`` of ``options`` (a field with explicit presence) when set, zero included;
    else ``default``."""
    value: _T = getattr(options, name) if options.HasField(name) else default
    return value


# -- cards ---------------------------------------------------------------------------------------


def card_to_pb(card: Card, shoe: Shoe) -> cards_pb2.Card:
    return cards_pb2.Card(index=shoe.card_to_index(card), face=card.face)


def card_from_pb(card: cards_pb2.Card, shoe: Shoe) -> Card:
    """The card at the wire card's index. Raises StreamPayloadError if it is outside the shoe."""
    try:
        return shoe.index_to_card(card.index)
    except (ValueError, IndexError) as exc:
        raise StreamPayloadError(f"card index {card.index} is not in the shoe: {exc}") from None


def cards_to_pb(cards: Sequence[Card], shoe: Shoe) -> list[cards_pb2.Card]:
    return [card_to_pb(c, shoe) for c in cards]


def faces(cards: Sequence[cards_pb2.Card]) -> str:
    """Wire cards by face, space-separated (``"7H 8H 9H"``; ``""`` for none)."""
    return " ".join(c.face for c in cards)


def cards_from_pb(cards: object, shoe: Shoe) -> tuple[Card, ...]:
    """The cards of a repeated ``rummy.common.v1.Card`` field. Raises StreamPayloadError."""
    return tuple(card_from_pb(c, shoe) for c in cards)  # type: ignore[attr-defined]


class OwnAnswers:
    """The part of a :class:`VariantWire` of a variant whose commands all come packed in
    ``PlayRequest.command`` and are always carried out as asked: no older per-command RPC, and
    its answers of one message type (``answer_type``)."""

    answer_type: type[Message]

    def request_command(self, request: Message) -> Message | None:
        return None

    def request_answer(self, request: Message, answer: Message | None) -> Message | None:
        return None

    def unpack_answer(self, packed: any_pb2.Any) -> Message | None:
        answer = self.answer_type()
        return answer if packed.Unpack(answer) else None

    def accepted(self, answer: Message) -> bool:
        return True
