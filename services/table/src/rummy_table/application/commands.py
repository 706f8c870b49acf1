"""The table service's commands: what a player or an operator asks, decoded from the request at
the edge (``rummy_table.entrypoints.grpc_messages``) into plain values and the domain's own messages
(the options and cards as the events record them, a variant's command packed as it came).

Every command names the caller's account (the token's subject, never an account from the
request), the client's ``client_request_id`` and the ``request_digest`` of the request as it came
(:func:`rummy_platform.envelope.request_digest` of its RPC and body, computed at the edge): the
handlers record both on the events they append, answer a retry with the same id and digest from
those events and refuse one with another digest (ALREADY_EXISTS)."""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf import any_pb2
from google.protobuf.message import Message

from rummy.common.v1 import cards_pb2
from rummy.match.v1 import match_pb2 as match_pb
from rummy.table.v1 import events_pb2 as pb

from .ports import Action


@dataclass(frozen=True)
class ClientCommand:
    """Who asks (``account_id``) and which attempt (``client_request_id``, "" when the client sent
    none: refused, INVALID_ARGUMENT), with the digest of the request's RPC and body."""

    account_id: str
    client_request_id: str
    request_digest: str


@dataclass(frozen=True)
class TableCommand(ClientCommand):
    """A command on the table ``table_id``."""

    table_id: str


@dataclass(frozen=True)
class OpenTable(ClientCommand):
    """An operator opens a table. ``rule_set``: the options as sent (the variant and its own
    options, the clock's seconds, the start delay); ``match``: a match format's options (None: a
    points table)."""

    name: str
    seat_count: int
    point_value_hundredths: int
    commission_bps: int
    rule_set: cards_pb2.RuleSet
    match: match_pb.MatchOptions | None


@dataclass(frozen=True)
class CloseTable(TableCommand):
    """An operator closes a table (the hand being played plays out first); ``reason`` is
    recorded on TableClosing."""

    reason: str


@dataclass(frozen=True)
class TakeSeat(TableCommand):
    """A player takes a seat: ``seat`` (None: the first free one)."""

    seat: int | None


@dataclass(frozen=True)
class LeaveTable(TableCommand):
    """A player stands up (mid-hand: the variant's leave)."""


@dataclass(frozen=True)
class HandCommand(TableCommand):
    """A command on the table's current hand: ``hand_id`` ("" = whatever hand runs)."""

    hand_id: str


@dataclass(frozen=True)
class ContributeSeed(HandCommand):
    """The player's seed for the hand's shuffle (bytes, at most
    ``rummy_platform.limits.MAX_CLIENT_SEED_BYTES``)."""

    client_seed: bytes


@dataclass(frozen=True)
class DrawCard(HandCommand):
    """Draw at turn ``turn_no`` from ``source`` (a ``DrawSource``: the stock or the discard
    pile; any other value is INVALID_ARGUMENT)."""

    turn_no: int
    source: pb.DrawSource.ValueType


@dataclass(frozen=True)
class DiscardCard(HandCommand):
    """Discard ``card`` (its wire form, checked against the hand's shoe) at turn ``turn_no``."""

    turn_no: int
    card: cards_pb2.Card


@dataclass(frozen=True)
class Play(HandCommand):
    """A command of the hand's variant (or a match command), packed as the client sent it."""

    turn_no: int
    command: any_pb2.Any


@dataclass(frozen=True)
class PlayOlderRpc(HandCommand):
    """An older per-command RPC (Declare, Drop): ``request`` is its request message as it came,
    which the hand's variant's wire turns into its command (and its answer into the RPC's
    response); ``action`` the latency label."""

    turn_no: int
    request: Message
    action: Action
