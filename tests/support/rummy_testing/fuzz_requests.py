"""What the gRPC fuzz sends: valid requests built from a live hand state, and their mutations.

:func:`draw_attempt` draws one :class:`Attempt` from hypothesis's :class:`Draws`: an RPC of one
of the five services (player RPCs for the seat they concern, operator RPCs with an operator
token), its valid request taken from the :class:`Live` state (right table, hand, turn, seat and
cards), then at most one thing made wrong: one field (wrong turn, another hand, table or account,
a foreign card, an oversized or strange string, an out-of-range number or enum, empty or
duplicated repeated fields), the token (none, malformed, wrongly signed, expired, another
player's, another role), the request id of an earlier accepted request, or a request of random
fields. Nothing here talks to a service.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict, TypeVar

import jwt
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from hypothesis import strategies as st

from rummy.clock.v1 import clock_service_pb2 as clock_api
from rummy.common.v1 import cards_pb2
from rummy.dealer.v1 import dealer_service_pb2 as dealer_api
from rummy.fairness.v1 import fairness_service_pb2 as fairness_api
from rummy.indian.v1 import events_pb2 as indian_events
from rummy.ledger.v1 import ledger_service_pb2 as ledger_api
from rummy.match.v1 import match_pb2 as match_pb
from rummy.table.v1 import events_pb2 as table_events
from rummy.table.v1 import table_service_pb2 as api
from rummy_platform.auth import ALGORITHM, AUDIENCE, ISSUER, Role, TokenAuthority
from rummy_testing.players import rule_set

if TYPE_CHECKING:
    from google._upb._message import FieldDescriptor as UpbFieldDescriptor

    #: A field's descriptor from either protobuf backend (pure Python, or upb: what runs here).
    Field: TypeAlias = FieldDescriptor | UpbFieldDescriptor

T = TypeVar("T")


class TurnFields(TypedDict):
    """The fields every turn command's request has."""

    table_id: str
    hand_id: str
    turn_no: int
    client_request_id: str


#: Lengths of the oversized strings tried (bytes): past every documented id/name maximum, past
#: a page of events, and past a megabyte (still under the 4 MB default message limit).
OVERSIZED = (65, 129, 257, 1_025, 70_000, 1_100_000)
#: Strings that are not what a field expects.
STRANGE = (
    "",
    " ",
    "²",
    "9" * 30,
    "-1",
    "0",
    "1e9",
    "\x00",
    "null",
    "' OR 1=1 --",
    "../..",
    "😀" * 9,
)
UINT32_EDGES = (0, 1, 2, 3, 7, 8, 13, 14, 52, 53, 105, 106, 107, 108, 2**16, 2**31, 2**32 - 1)
INT64_EDGES = (0, 1, -1, 100, 2**31, 2**53, 2**62, 2**63 - 1, -(2**63), 9 * 10**18)
#: Hand RPCs: the requests that carry a table, a hand, a turn and a seat's cards.
HAND_RPCS = ("DrawCard", "DiscardCard", "Declare", "Drop", "Play", "ContributeSeed")
#: The ledger's responsible-play RPCs that change a player's own limits. Their valid requests name
#: the player never granted anything and never seated (a break or an exclusion of a seated player
#: would keep the fuzz's hands from being dealt).
LIMIT_RPCS = (
    "SetLossLimit",
    "SetStakeLimit",
    "SetLimitsTimeZone",
    "StartBreak",
    "EndBreak",
    "SelfExclude",
    "AskToReturn",
)
#: RPCs that only read: an OK answer must leave every topic and balance as it was too.
READ_ONLY = frozenset(
    {
        "ListTables",
        "WatchTable",
        "GetHandResult",
        "GetBalance",
        "GetStatement",
        "ListMyHands",
        "GetLimits",
        "CheckSeat",
        "GetProof",
        "GetServerSeed",
        "GetShuffleSpec",
        "ListPendingDeadlines",
        "GetHandProof",
    }
)
#: Every RPC of the five services, by service.
RPCS: dict[str, tuple[str, ...]] = {
    "table": (
        "OpenTable",
        "ListTables",
        "TakeSeat",
        "LeaveTable",
        "ContributeSeed",
        "DrawCard",
        "DiscardCard",
        "Declare",
        "Drop",
        "Play",
        "WatchTable",
        "GetHandResult",
        "GetHandProof",
        "CloseTable",
    ),
    "ledger": (
        "GetBalance",
        "GetStatement",
        "ListMyHands",
        "Grant",
        *LIMIT_RPCS,
        "GetLimits",
        "CheckSeat",
    ),
    "fairness": ("GetProof", "GetServerSeed"),
    "dealer": ("GetShuffleSpec",),
    "clock": ("ListPendingDeadlines",),
}
SERVICE_OF = {rpc: service for service, rpcs in RPCS.items() for rpc in rpcs}
#: The services of the protos, by the service names of :data:`RPCS`.
SERVICE_DESCRIPTORS = {
    "table": api.DESCRIPTOR.services_by_name["TableService"],
    "ledger": ledger_api.DESCRIPTOR.services_by_name["LedgerService"],
    "fairness": fairness_api.DESCRIPTOR.services_by_name["FairnessService"],
    "dealer": dealer_api.DESCRIPTOR.services_by_name["DealerService"],
    "clock": clock_api.DESCRIPTOR.services_by_name["ClockService"],
}


def rpcs_of_the_protos() -> set[str]:
    """Every RPC the five services' protos declare."""
    return {m.name for service in SERVICE_DESCRIPTORS.values() for m in service.methods}


#: How often each RPC is drawn (weights; the hand RPCs dominate so most requests reach the rules).
RPC_WEIGHTS: dict[str, int] = {
    "DrawCard": 28,
    "DiscardCard": 26,
    "Declare": 8,
    "Drop": 6,
    "Play": 6,
    "ContributeSeed": 6,
    "TakeSeat": 2,
    "LeaveTable": 2,
    "WatchTable": 1,
    "GetHandResult": 2,
    "GetHandProof": 2,
    "OpenTable": 2,
    "CloseTable": 2,
    "ListTables": 1,
    "GetBalance": 2,
    "GetStatement": 3,
    "ListMyHands": 2,
    "Grant": 3,
    "GetLimits": 3,
    "SetLossLimit": 3,
    "SetStakeLimit": 3,
    "SetLimitsTimeZone": 3,
    "StartBreak": 3,
    "EndBreak": 3,
    "SelfExclude": 3,
    "AskToReturn": 3,
    "CheckSeat": 3,
    "GetProof": 2,
    "GetServerSeed": 2,
    "GetShuffleSpec": 1,
    "ListPendingDeadlines": 2,
}


@dataclass(frozen=True)
class Account:
    """A player account of the fuzz and its valid player token."""

    account_id: str
    token: str


@dataclass(frozen=True)
class Live:
    """The state requests are built from, read from the players' own views after the world
    settled. ``hands``: account -> its cards (card indices) in the current hand; ``seats``:
    account -> seat at the main table; ``dealt``: accounts dealt into the current hand;
    ``turn_account``: the account on turn (or None); ``legal_moves``: its view's legal moves."""

    table_id: str
    other_table_id: str
    phase: int
    hand_id: str
    turn_no: int
    turn_account: str | None
    has_drawn: bool
    discard_pile: tuple[int, ...]
    stock_count: int
    hands: dict[str, tuple[int, ...]]
    seats: dict[str, int]
    dealt: tuple[str, ...]
    past_hands: tuple[str, ...]
    shoe_size: int
    face_of: Callable[[int], str]
    #: The moves the account on turn may make now, as its view lists them (the variant's
    #: ``legal_commands``).
    legal_moves: tuple[api.LegalMove, ...] = ()


@dataclass
class Tokens:
    """Every token the fuzz may present: the players', the operator's and the service's, and
    tokens that must be refused."""

    authority: TokenAuthority
    players: dict[str, Account]
    operator: str
    service: str
    wrong_secret: TokenAuthority = field(default_factory=lambda: TokenAuthority("w" * 40))

    def bad(self, kind: str, account_id: str) -> str | None:
        """A token of ``kind`` for ``account_id`` (None: no authorization metadata at all)."""
        now = time.time()
        if kind == "none":
            return None
        if kind == "garbage":
            return "not-a-jwt"
        if kind == "wrong-signature":
            return self.wrong_secret.issue(account_id, Role.PLAYER, 600)
        if kind == "expired":
            return self.authority.issue(account_id, Role.PLAYER, 60, now=now - 7200)
        if kind == "unknown-role":
            return self._sign({"sub": account_id, "role": "root"}, now)
        if kind == "empty-account":
            return self._sign({"sub": "", "role": "player"}, now)
        if kind == "no-expiry":
            return self._sign({"sub": account_id, "role": "player", "exp": None}, now)
        if kind == "thirty-years":  # validly signed, but far past any role's longest lifetime
            return self._sign(
                {"sub": account_id, "role": "player", "exp": now + 30 * 365 * 86400}, now
            )
        if kind == "nul-account":  # validly signed, naming an account no database can store
            return self._sign({"sub": account_id + "\x00", "role": "player"}, now)
        if kind == "no-kid":
            return self._sign({"sub": account_id, "role": "player"}, now, kid=None)
        if kind == "unknown-kid":
            return self._sign({"sub": account_id, "role": "player"}, now, kid="0123456789abcdef")
        if kind == "none-algorithm":
            claims = {"sub": account_id, "role": "operator", "iat": int(now), "exp": int(now) + 600}
            claims.update(iss=ISSUER, aud=AUDIENCE)
            return jwt.encode(claims, "", algorithm="none")
        raise ValueError(kind)

    def _sign(self, claims: dict[str, object], now: float, kid: str | None = "") -> str:
        """``claims`` (over iat/exp/iss/aud of a ten-minute token; a claim None is left out)
        signed with the services' secret, under the ``kid`` header of the authority unless
        ``kid`` is given (None: no header)."""
        full = {"iat": int(now), "exp": int(now) + 600, "iss": ISSUER, "aud": AUDIENCE, **claims}
        full = {
            k: (int(v) if isinstance(v, float) else v) for k, v in full.items() if v is not None
        }
        headers = {"kid": self.authority.key_id if kid == "" else kid} if kid is not None else None
        secret = self.authority._secret  # noqa: SLF001 - the test signs malformed claims itself
        return jwt.encode(full, secret, algorithm=ALGORITHM, headers=headers)


BAD_TOKENS = (
    "none",
    "garbage",
    "wrong-signature",
    "expired",
    "unknown-role",
    "empty-account",
    "no-expiry",
    "thirty-years",
    "nul-account",
    "no-kid",
    "unknown-kid",
    "none-algorithm",
)


@dataclass
class Attempt:
    """One request to send: ``rpc`` of ``service`` with ``request`` and ``token`` (None = no
    authorization metadata), made by ``actor`` (an account id, or ``operator``/``service``);
    ``mutation`` says what was made wrong (``valid`` when nothing)."""

    service: str
    rpc: str
    request: Message
    token: str | None
    actor: str
    mutation: str = "valid"
    #: Strings of the request longer than this are shown shortened in a repro.
    repro_limit: int = 80

    def describe(self) -> str:
        """The request in one line, long strings shortened (``'xxx…' (70000 chars)``)."""
        return f"{self.service}.{self.rpc}({_short(self.request, self.repro_limit)})"


def _short(message: Message, limit: int) -> str:
    parts = []
    for fd, value in message.ListFields():
        if fd.is_repeated:
            items = list(value)
            shown = [_value(fd, v, limit) for v in items[:3]]
            more = f", … {len(items)} in all" if len(items) > 3 else ""
            parts.append(f"{fd.name}=[{', '.join(shown)}{more}]")
        else:
            parts.append(f"{fd.name}={_value(fd, value, limit)}")
    return ", ".join(parts)


def _value(fd: FieldDescriptor, value: object, limit: int) -> str:
    if fd.type == FieldDescriptor.TYPE_MESSAGE:
        return "{" + _short(value, limit) + "}"  # type: ignore[arg-type]
    if isinstance(value, str | bytes) and len(value) > limit:
        return f"{value[:12]!r}… ({len(value)} {'chars' if isinstance(value, str) else 'bytes'})"
    return repr(value)


# -- strategies ---------------------------------------------------------------------------------


@dataclass
class Draws:
    """The choices of one request, drawn by hypothesis all at once (a fixed shape, whatever the
    live state, so that hypothesis sees the same kind of data every time) and consumed in order
    as the request is built: ``picks`` index into whatever the live state offers, the other
    pools give strings, bytes and numbers with hypothesis's taste for edge cases. When a pool
    runs dry, ``rng`` (seeded from the picks) goes on."""

    picks: list[int]
    texts: list[str]
    blobs: list[bytes]
    uint32s: list[int]
    int64s: list[int]
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(hash(tuple(self.picks)))

    def _next(self, pool: list[Any], fallback: Callable[[], Any]) -> Any:
        return pool.pop(0) if pool else fallback()

    def pick(self) -> int:
        return int(self._next(self.picks, lambda: self.rng.randrange(2**16)))

    def choice(self, options: Sequence[T]) -> T:
        items = list(options)
        return items[self.pick() % len(items)]

    def flag(self) -> bool:
        return self.pick() % 2 == 1

    def integer(self, low: int, high: int) -> int:
        return low + self.pick() % (high - low + 1)

    def text(self) -> str:
        return str(self._next(self.texts, lambda: ""))

    def blob(self) -> bytes:
        return bytes(self._next(self.blobs, lambda: self.rng.randbytes(self.integer(0, 80))))

    def uint32(self) -> int:
        return int(self._next(self.uint32s, lambda: self.rng.getrandbits(32)))

    def int64(self) -> int:
        return int(self._next(self.int64s, lambda: self.rng.getrandbits(64) - 2**63))


def draws() -> st.SearchStrategy[Draws]:
    """The strategy of :class:`Draws`."""
    return st.builds(
        Draws,
        picks=st.lists(st.integers(0, 2**16 - 1), min_size=40, max_size=40),
        texts=st.lists(st.text(max_size=40), min_size=2, max_size=2),
        blobs=st.lists(st.binary(max_size=100), min_size=2, max_size=2),
        uint32s=st.lists(st.integers(0, 2**32 - 1), min_size=3, max_size=3),
        int64s=st.lists(st.integers(-(2**63), 2**63 - 1), min_size=3, max_size=3),
    )


def weighted(d: Draws, weights: dict[str, int]) -> str:
    """One key of ``weights``, drawn with probability proportional to its weight."""
    total = sum(weights.values())
    pick = d.integer(0, total - 1)
    for key, weight in weights.items():
        if pick < weight:
            return key
        pick -= weight
    raise AssertionError("unreachable")


def oversized(d: Draws) -> str:
    n = d.choice(OVERSIZED)
    return d.choice("x9é") * n


def wrong_string(d: Draws, others: Sequence[str]) -> str:
    """Another id of the live world, an oversized or strange string, or random text."""
    kind = d.choice(("other", "oversized", "strange", "text", "uuid"))
    if kind == "other" and others:
        return d.choice(list(others))
    if kind == "oversized":
        return oversized(d)
    if kind == "text":
        return d.text()
    if kind == "uuid":
        return str(uuid.UUID(int=d.rng.getrandbits(128)))
    return d.choice(STRANGE)


def wrong_uint32(d: Draws, current: int) -> int:
    near = [current + d for d in (-2, -1, 1, 2, 5) if 0 <= current + d < 2**32]
    return d.choice([*near, *UINT32_EDGES]) if d.flag() else d.uint32()


def wrong_int64(d: Draws) -> int:
    return d.choice(INT64_EDGES) if d.flag() else d.int64()


def wrong_card(d: Draws, live: Live, mine: Sequence[int]) -> cards_pb2.Card:
    """A card that is not one of ``mine``: another seat's, the discard pile's, one off the shoe,
    a face that does not match its index, or an empty card."""
    foreign = [c for account, cards in live.hands.items() for c in cards if c not in mine]
    pile = [c for c in live.discard_pile if c not in mine]
    kind = d.choice(("foreign", "pile", "off-shoe", "any", "face", "empty"))
    if kind == "foreign" and foreign:
        index = d.choice(foreign)
    elif kind == "pile" and pile:
        index = d.choice(pile)
    elif kind == "off-shoe":
        index = d.choice((live.shoe_size, live.shoe_size + 1, 2**31, 2**32 - 1))
    elif kind == "face" and mine:
        index = d.choice(list(mine))
        return cards_pb2.Card(index=index, face=wrong_string(d, ["AS", "JK", "10H"]))
    elif kind == "empty":
        return cards_pb2.Card()
    else:
        index = d.integer(0, live.shoe_size - 1)
    return cards_pb2.Card(index=index, face=_face(live, index))


def _face(live: Live, index: int) -> str:
    return live.face_of(index) if 0 <= index < live.shoe_size else ""


def random_message(d: Draws, cls: type[Message], depth: int = 0) -> Message:
    """A message of ``cls`` with random fields (each set or not, nested messages two deep)."""
    message = cls()
    for fd in cls.DESCRIPTOR.fields:
        if not d.flag():
            continue
        repeated = fd.is_repeated
        count = d.integer(0, 4) if repeated else 1
        for _ in range(count):
            if fd.type == FieldDescriptor.TYPE_MESSAGE:
                if depth >= 2:
                    break
                holder = getattr(message, fd.name)
                target = holder.add() if repeated else holder
                target.CopyFrom(random_message(d, type(target), depth + 1))
                continue
            value = random_scalar(d, fd)
            if repeated:
                getattr(message, fd.name).append(value)
            else:
                setattr(message, fd.name, value)
    return message


def random_scalar(d: Draws, fd: Field) -> object:
    t = fd.type
    if t == FieldDescriptor.TYPE_STRING:
        return d.text() if d.flag() else d.choice(STRANGE)
    if t == FieldDescriptor.TYPE_BYTES:
        return d.blob()
    if t == FieldDescriptor.TYPE_BOOL:
        return d.flag()
    if t == FieldDescriptor.TYPE_ENUM:
        return d.integer(-3, 12)
    if t in (FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_FIXED32):
        return d.uint32()
    if t in (FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64):
        return d.uint32() * 2**32 + d.uint32()
    if t in (
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_SFIXED32,
    ):
        return d.uint32() - 2**31
    if t in (
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_SFIXED64,
    ):
        return d.int64()
    raise TypeError(f"no random value for field {fd.full_name} of type {t}")


# -- valid requests from the live state ----------------------------------------------------------


class Builder:
    """Builds the valid request of each RPC from a :class:`Live` state, and mutates it."""

    def __init__(
        self, tokens: Tokens, grantees: Sequence[str], limits_account: str | None = None
    ) -> None:
        self.tokens = tokens
        self.grantees = list(grantees)
        #: The account whose own limits the limit RPCs change (see :data:`LIMIT_RPCS`).
        self.limits_account = limits_account or sorted(tokens.players)[-1]
        self.accepted_ids: list[tuple[str, str]] = []  # (account, client_request_id) answered OK
        self.page_tokens: list[str] = []
        self.opened_tables: list[str] = []  # tables OpenTable opened for the fuzz (to close)
        self._n = 0

    def fresh_id(self) -> str:
        self._n += 1
        return str(uuid.uuid4())

    def player(self, account_id: str) -> str:
        return self.tokens.players[account_id].token

    # one builder per RPC: (actor, request, token)

    def _actor_on_turn(self, d: Draws, live: Live) -> str:
        if live.turn_account is not None:
            return live.turn_account
        if live.dealt:
            return d.choice(list(live.dealt))
        return d.choice(sorted(self.tokens.players))

    def _turn_fields(self, live: Live) -> TurnFields:
        return {
            "table_id": live.table_id,
            "hand_id": live.hand_id,
            "turn_no": live.turn_no,
            "client_request_id": self.fresh_id(),
        }

    def _match_options(self, d: Draws) -> match_pb.MatchOptions:
        """A format's options: a pool, a game to N or a Hollywood with some game-end scoring
        (its bonuses drawn within and past the rules' bound of 100000 points)."""
        arm = d.choice(("pool", "game_to", "hollywood"))
        if arm == "pool":
            return match_pb.MatchOptions(
                pool=match_pb.PoolOptions(target=d.choice((101, 201)), entry_fee_hundredths=100)
            )
        scoring = match_pb.GameScoring(
            game_bonus_points=d.choice((0, 100, d.uint32())),
            shutout_bonus_points=d.choice((0, 200)),
            box_points=d.choice((0, 25, d.uint32())),
        )
        if arm == "game_to":
            return match_pb.MatchOptions(
                game_to=match_pb.GameToOptions(
                    target=d.choice((100, 150, 250)),
                    games=d.integer(0, 3),
                    point_value_hundredths=d.integer(0, 10),
                    max_game_points=d.integer(0, 500),
                    missed_turns_lose_game=d.flag(),
                    scoring=scoring,
                )
            )
        return match_pb.MatchOptions(
            hollywood=match_pb.HollywoodOptions(
                target=d.choice((100, 150, 250)),
                point_value_hundredths=d.integer(0, 10),
                max_game_points=d.integer(0, 500),
                missed_turns_lose_game=d.flag(),
                scoring=scoring,
            )
        )

    def build(self, d: Draws, rpc: str, live: Live) -> tuple[str, Message, str]:
        accounts = sorted(self.tokens.players)
        if rpc in ("DrawCard", "DiscardCard", "Declare", "Drop", "Play"):
            actor = self._actor_on_turn(d, live)
            mine = list(live.hands.get(actor, ()))
            fields = self._turn_fields(live)
            if rpc == "DrawCard":
                source = table_events.DRAW_SOURCE_STOCK
                if live.discard_pile and d.flag():
                    source = table_events.DRAW_SOURCE_DISCARD_PILE
                request: Message = api.DrawCardRequest(**fields, source=source)
            elif rpc == "DiscardCard":
                card = d.choice(mine) if mine else 0
                request = api.DiscardCardRequest(
                    **fields, card=cards_pb2.Card(index=card, face=_face(live, card))
                )
            elif rpc == "Declare":
                face_down = d.choice(mine) if mine else 0
                rest = [c for c in mine if c != face_down]
                sizes = [d.integer(3, 5) for _ in range(d.integer(0, 4))]
                groups, at = [], 0
                for size in sizes:
                    if at + size > len(rest):
                        break
                    groups.append(
                        cards_pb2.CardGroup(
                            cards=[
                                cards_pb2.Card(index=c, face=_face(live, c))
                                for c in rest[at : at + size]
                            ]
                        )
                    )
                    at += size
                request = api.DeclareRequest(
                    **fields,
                    face_down=cards_pb2.Card(index=face_down, face=_face(live, face_down)),
                    groups=groups,
                )
            elif rpc == "Play":  # the variant's own command, packed
                request = api.PlayRequest(**fields)
                own = [m.command for m in live.legal_moves if m.HasField("command")]
                if own and d.flag():  # one the view lists: the variant's legal_commands
                    request.command.CopyFrom(d.choice(own))
                elif d.flag():
                    face_down = d.choice(mine) if mine else 0
                    hidden = cards_pb2.Card(index=face_down, face=_face(live, face_down))
                    request.command.Pack(indian_events.Declare(face_down=hidden))
                else:
                    request.command.Pack(indian_events.Drop())
            else:
                request = api.DropRequest(**fields)
            return actor, request, self.player(actor)
        if rpc == "ContributeSeed":
            actor = d.choice(list(live.dealt) or accounts)
            seed = d.blob()[:64] or b"\x01"
            request = api.ContributeSeedRequest(
                table_id=live.table_id,
                hand_id=live.hand_id,
                client_request_id=self.fresh_id(),
                client_seed=seed,
            )
            return actor, request, self.player(actor)
        if rpc == "TakeSeat":
            unseated = [a for a in accounts if a not in live.seats]
            actor = d.choice(unseated or accounts)
            table = d.choice((live.table_id, live.other_table_id))
            request = api.TakeSeatRequest(table_id=table, client_request_id=self.fresh_id())
            if d.flag():
                request.seat = d.integer(0, 3)
            return actor, request, self.player(actor)
        if rpc == "LeaveTable":
            actor = d.choice(sorted(live.seats) or accounts)
            request = api.LeaveTableRequest(
                table_id=live.table_id, client_request_id=self.fresh_id()
            )
            return actor, request, self.player(actor)
        if rpc == "WatchTable":
            actor = d.choice(accounts)
            return actor, api.WatchTableRequest(table_id=live.table_id), self.player(actor)
        if rpc == "GetHandResult":
            actor = d.choice(accounts)
            hand = d.choice(list(live.past_hands) or [live.hand_id])
            request = api.GetHandResultRequest(table_id=live.table_id, hand_id=hand)
            return actor, request, self.player(actor)
        if rpc == "GetHandProof":
            actor = d.choice([*accounts, "operator"])
            token = self.tokens.operator if actor == "operator" else self.player(actor)
            hand = d.choice(list(live.past_hands) or [live.hand_id])
            return actor, api.GetHandProofRequest(table_id=live.table_id, hand_id=hand), token
        if rpc == "CloseTable":
            # Only tables the fuzz opened: closing the main one would end the fuzz.
            table = d.choice(self.opened_tables) if self.opened_tables else self.fresh_id()
            request = api.CloseTableRequest(
                table_id=table, client_request_id=self.fresh_id(), reason="fuzz"
            )
            return "operator", request, self.tokens.operator
        if rpc == "OpenTable":
            request = api.OpenTableRequest(
                client_request_id=self.fresh_id(),
                name=f"fuzz-{self._n}",
                seat_count=d.choice((4, 6, 8)),
                point_value_hundredths=d.integer(0, 100),
                commission_bps=d.integer(0, 2000),
                rule_set=rule_set(turn_seconds=60, seed_window_seconds=10, start_delay_seconds=20),
            )
            if d.flag():  # a match table (the format owns the money: no point value)
                request.point_value_hundredths = 0
                request.match.CopyFrom(self._match_options(d))
                if request.match.WhichOneof("format") == "hollywood" and d.flag():
                    request.seat_count = 2
            return "operator", request, self.tokens.operator
        if rpc == "ListTables":
            actor = d.choice([*accounts, "operator"])
            token = self.tokens.operator if actor == "operator" else self.player(actor)
            return actor, api.ListTablesRequest(page_size=d.integer(0, 20)), token
        if rpc in ("GetBalance", "GetStatement", "ListMyHands"):
            actor = d.choice([*accounts, "operator"])
            named = d.choice(accounts) if actor == "operator" else ""
            if actor != "operator" and d.flag():
                named = actor
            token = self.tokens.operator if actor == "operator" else self.player(actor)
            if rpc == "GetBalance":
                return actor, ledger_api.GetBalanceRequest(account_id=named), token
            page = ""
            if self.page_tokens and d.flag():
                page = d.choice(self.page_tokens)
            if rpc == "ListMyHands":  # tokens of both RPCs are drawn: the other's is refused
                hands = ledger_api.ListMyHandsRequest(
                    account_id=named, page_size=d.integer(0, 5), page_token=page
                )
                return actor, hands, token
            request = ledger_api.GetStatementRequest(
                account_id=named, page_size=d.integer(0, 5), page_token=page
            )
            return actor, request, token
        if rpc == "Grant":
            request = ledger_api.GrantRequest(
                account_id=d.choice(self.grantees),
                amount_hundredths=d.integer(1, 10_000),
                idempotency_key=self.fresh_id(),
                memo="fuzz",
            )
            return "operator", request, self.tokens.operator
        if rpc in LIMIT_RPCS or rpc in ("GetLimits", "CheckSeat"):
            return self._limits_request(d, rpc, accounts)
        if rpc in ("GetProof", "GetServerSeed"):
            hand = d.choice([*live.past_hands, live.hand_id])
            if rpc == "GetServerSeed":
                return (
                    "service",
                    fairness_api.GetServerSeedRequest(hand_id=hand),
                    self.tokens.service,
                )
            actor = d.choice([*accounts, "operator"])
            token = self.tokens.operator if actor == "operator" else self.player(actor)
            return actor, fairness_api.GetProofRequest(hand_id=hand), token
        if rpc == "GetShuffleSpec":
            actor = d.choice(accounts)
            return actor, dealer_api.GetShuffleSpecRequest(), self.player(actor)
        if rpc == "ListPendingDeadlines":
            table = d.choice((live.table_id, ""))
            request = clock_api.ListPendingDeadlinesRequest(table_id=table, limit=d.integer(0, 10))
            return "operator", request, self.tokens.operator
        raise ValueError(rpc)

    def _limits_request(self, d: Draws, rpc: str, accounts: list[str]) -> tuple[str, Message, str]:
        """A valid responsible-play request: a change by :attr:`limits_account` of its own
        limits, a read by a player of its own (or by the operator, naming one), the service's
        CheckSeat."""
        own = self.limits_account
        if rpc == "GetLimits":
            actor = d.choice([*accounts, "operator"])
            if actor == "operator":
                request = ledger_api.GetLimitsRequest(account_id=d.choice(accounts))
                return actor, request, self.tokens.operator
            return actor, ledger_api.GetLimitsRequest(), self.player(actor)
        if rpc == "CheckSeat":
            check = ledger_api.CheckSeatRequest(
                account_id=d.choice(accounts), amount_hundredths=d.integer(0, 10_000)
            )
            return "service", check, self.tokens.service
        amount = d.integer(0, 100_000)
        requests: dict[str, Message] = {
            "SetLossLimit": ledger_api.SetLossLimitRequest(
                account_id=own,
                period=d.choice(
                    (
                        ledger_api.LIMIT_PERIOD_DAY,
                        ledger_api.LIMIT_PERIOD_WEEK,
                        ledger_api.LIMIT_PERIOD_MONTH,
                    )
                ),
                amount_hundredths=amount,
            ),
            "SetStakeLimit": ledger_api.SetStakeLimitRequest(
                account_id=own, amount_hundredths=amount
            ),
            "SetLimitsTimeZone": ledger_api.SetLimitsTimeZoneRequest(
                account_id=own, time_zone=d.choice(("UTC", "Asia/Kolkata", "Europe/Berlin"))
            ),
            "StartBreak": ledger_api.StartBreakRequest(
                account_id=own, duration_seconds=d.integer(86_400, 6 * 7 * 86_400)
            ),
            "EndBreak": ledger_api.EndBreakRequest(account_id=own),
            "SelfExclude": ledger_api.SelfExcludeRequest(
                account_id=own, months=d.integer(6, 60), indefinite=d.flag()
            ),
            "AskToReturn": ledger_api.AskToReturnRequest(account_id=own),
        }
        return own, requests[rpc], self.player(own)

    # -- mutations ------------------------------------------------------------------------------

    def mutate_field(self, d: Draws, attempt: Attempt, live: Live) -> None:  # noqa: C901 - one branch per kind of field
        """Make one field of ``attempt.request`` wrong (a nested field of a set sub-message
        counts), and say which in ``attempt.mutation``."""
        paths = _field_paths(attempt.request)
        # The fields the rules judge (turn, cards) more often than those checked at the door.
        path = d.choice([p for p in paths for _ in range(_FIELD_WEIGHTS.get(p[-1], 1))])
        *parents, name = path
        holder = attempt.request
        for part in parents:
            holder = getattr(holder, part)
        fd = holder.DESCRIPTOR.fields_by_name[name]
        mine = list(live.hands.get(attempt.actor, ()))
        label = ".".join(path)
        if fd.is_repeated:
            self._mutate_repeated(d, holder, fd, live, mine)
            attempt.mutation = f"{label}: {self._last}"
            return
        if fd.type == FieldDescriptor.TYPE_MESSAGE:
            if fd.message_type is not None and fd.message_type.full_name == "rummy.common.v1.Card":
                card = wrong_card(d, live, mine)
                getattr(holder, name).CopyFrom(card)
                attempt.mutation = f"{label}=index {card.index} face {card.face[:8]!r}"
            else:
                holder.ClearField(name)
                attempt.mutation = f"{label} cleared"
            return
        if fd.type == FieldDescriptor.TYPE_STRING:
            others = [
                live.table_id,
                live.other_table_id,
                live.hand_id,
                *live.past_hands,
                *self.tokens.players,
                *(rid for _, rid in self.accepted_ids[-5:]),
            ]
            if attempt.rpc == "CloseTable":  # never the tables the fuzz plays at
                others = [*self.opened_tables, *self.tokens.players]
            text = wrong_string(d, [o for o in others if o != getattr(holder, name)])
            setattr(holder, name, text)
            attempt.mutation = f"{label}={_clip(text)}"
            return
        if fd.type == FieldDescriptor.TYPE_BYTES:
            n = d.choice((0, 65, 1_000, 70_000))
            setattr(holder, name, b"\xff" * n)
            attempt.mutation = f"{label}={n} bytes"
            return
        if fd.type == FieldDescriptor.TYPE_ENUM:
            value = d.choice((0, 1, 2, 3, 99, -1, 2**31 - 1))
            setattr(holder, name, value)
            attempt.mutation = f"{label}={value}"
            return
        if fd.type == FieldDescriptor.TYPE_BOOL:
            setattr(holder, name, not getattr(holder, name))
            attempt.mutation = f"{label} flipped"
            return
        if fd.type == FieldDescriptor.TYPE_INT64:
            value = wrong_int64(d)
        else:
            value = wrong_uint32(d, getattr(holder, name))
        setattr(holder, name, value)
        attempt.mutation = f"{label}={value}"

    _last = ""

    def _mutate_repeated(
        self,
        d: Draws,
        holder: Message,
        fd: Field,
        live: Live,
        mine: list[int],
    ) -> None:
        items = getattr(holder, fd.name)
        kind = d.choice(("empty", "duplicated", "many", "foreign", "huge group"))
        if kind == "empty" or fd.type != FieldDescriptor.TYPE_MESSAGE:
            del items[:]
            self._last = "emptied"
            return
        if kind == "duplicated" and len(items):
            first = type(items[0])()
            first.CopyFrom(items[0])
            for _ in range(d.integer(1, 3)):
                items.add().CopyFrom(first)
            self._last = "a group duplicated"
            return
        if kind == "many":
            n = d.choice((14, 200, 5_000))
            for i in range(n):
                group = items.add()
                if hasattr(group, "cards"):
                    index = mine[i % len(mine)] if mine else i % live.shoe_size
                    group.cards.add(index=index, face=_face(live, index))
            self._last = f"{n} groups"
            return
        if kind == "huge group":
            group = items.add()
            n = d.choice((14, 106, 20_000))
            for i in range(n):
                index = i % live.shoe_size
                group.cards.add(index=index, face=_face(live, index))
            self._last = f"a group of {n} cards"
            return
        group = items.add()
        group.cards.add().CopyFrom(wrong_card(d, live, mine))
        self._last = "a group with a card not held"

    def mutate_token(self, d: Draws, attempt: Attempt, live: Live) -> None:
        """Present another token: a refused one, another player's, or another role's."""
        kind = d.choice((*BAD_TOKENS, "other-player", "operator", "service", "player"))
        account = attempt.actor if attempt.actor in self.tokens.players else "fuzz-nobody"
        if kind == "other-player":
            others = [a for a in (*live.dealt, *self.tokens.players) if a != attempt.actor]
            other = d.choice(others)
            attempt.token = self.player(other)
            attempt.mutation = f"token of another player ({other})"
            return
        if kind == "operator":
            attempt.token = self.tokens.operator
        elif kind == "service":
            attempt.token = self.tokens.service
        elif kind == "player":
            attempt.token = self.player(d.choice(sorted(self.tokens.players)))
        else:
            attempt.token = self.tokens.bad(kind, account)
        attempt.mutation = f"token: {kind}"

    def reuse_request_id(self, d: Draws, attempt: Attempt) -> bool:
        """Give the request the id of an earlier accepted request of the same account (a retry
        with a different body); False when it has no such field or no id to reuse."""
        fields = attempt.request.DESCRIPTOR.fields_by_name
        key = "client_request_id" if "client_request_id" in fields else "idempotency_key"
        if key not in fields:
            return False
        mine = [rid for account, rid in self.accepted_ids if account == attempt.actor]
        if not mine:
            return False
        setattr(attempt.request, key, d.choice(mine[-20:]))
        attempt.mutation = f"{key} of an earlier accepted request"
        return True


def _clip(value: str) -> str:
    return repr(value) if len(value) <= 24 else f"{value[:8]!r}… ({len(value)} chars)"


def _field_paths(message: Message) -> list[tuple[str, ...]]:
    """Every field of the request, and the fields of its set sub-messages (one level down)."""
    paths: list[tuple[str, ...]] = []
    for fd in message.DESCRIPTOR.fields:
        paths.append((fd.name,))
        sub_message = fd.message_type
        if (
            fd.type == FieldDescriptor.TYPE_MESSAGE
            and sub_message is not None
            and not fd.is_repeated
            and message.HasField(fd.name)
            and sub_message.full_name != "rummy.common.v1.Card"
        ):
            paths.extend((fd.name, sub.name) for sub in sub_message.fields)
    return paths


#: How an attempt is spoiled, with weights: most get one wrong field.
MUTATION_WEIGHTS = {"valid": 28, "field": 50, "seat": 12, "token": 5, "reuse-id": 3, "random": 2}
_FIELD_WEIGHTS = {"turn_no": 6, "card": 5, "face_down": 4, "groups": 3, "source": 2}


def draw_attempt(d: Draws, builder: Builder, live: Live, rpc: str | None = None) -> Attempt:
    """One request to send, drawn from the live state (see the module doc); of ``rpc`` when
    given (the fuzz's first pass sends every RPC once), else of an RPC drawn by weight."""
    if rpc is None:
        weights = dict(RPC_WEIGHTS)
        if live.phase == api.HAND_PHASE_SEEDING:
            weights["ContributeSeed"] = 40
        rpc = weighted(d, weights)
    actor, request, token = builder.build(d, rpc, live)
    attempt = Attempt(SERVICE_OF[rpc], rpc, request, token, actor)
    how = weighted(d, MUTATION_WEIGHTS)
    if how == "field" and request.DESCRIPTOR.fields:
        builder.mutate_field(d, attempt, live)
    elif how == "seat" and rpc in HAND_RPCS and len(live.dealt) > 1:
        other = d.choice([a for a in live.dealt if a != actor])
        attempt.token = builder.player(other)
        attempt.mutation = f"seat: sent by another dealt-in player ({other})"
    elif how in ("token", "seat"):
        builder.mutate_token(d, attempt, live)
    elif how == "reuse-id" and builder.reuse_request_id(d, attempt):
        pass
    elif how == "random":
        attempt.request = random_message(d, type(request))
        attempt.mutation = "random fields"
    return attempt
