"""The one home of the size limits of every request: strings, bytes, repeated fields, messages.

Every string and bytes field of every request, and every repeated field, has a maximum, by field
name, in :func:`field_limits` (the hosts' :data:`FIELD_LIMITS` and each installed variant's own,
per variant: a variant's command is held to its own variant's; bytes for strings, UTF-8 encoded,
and for bytes; items for repeated fields); the ``.proto`` comment of each field states the same
number. The :class:`RequestLimitsInterceptor` that every
:class:`~rummy_platform.server.ServiceHost` installs checks each request of a unary-request RPC
against them, nested messages included, before the servicer runs: a field over its limit ends the
call INVALID_ARGUMENT with a message naming the field, its size and the limit (never the value). No
string field may hold a NUL character (U+0000: PostgreSQL text cannot store it; no id, name or token
needs it): one that does is INVALID_ARGUMENT naming the field. A request the server cannot parse
(invalid UTF-8 in a string) is INVALID_ARGUMENT too, not gRPC's INTERNAL.

Whole messages are bounded by gRPC itself: servers take requests up to
:data:`MAX_REQUEST_BYTES` and send responses up to :data:`MAX_RESPONSE_BYTES`
(:data:`SERVER_OPTIONS`); clients dial with the mirror image (:func:`open_channel`), so a client
of ours never sends what a server refuses and reads every answer a server may send. Past the
limit gRPC answers RESOURCE_EXHAUSTED.

Page tokens are parsed strictly (:func:`parse_position_token`, :func:`parse_id_token`): a token
this service could not have handed out is INVALID_ARGUMENT, never a database error.
"""

from __future__ import annotations

import inspect
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import grpc
import grpc.aio
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from rummy_platform import variant_payloads
from rummy_platform.config import TlsSettings
from rummy_platform.errors import InvalidArgument
from rummy_platform.rpc_scope import AioHandlerInterceptor, Handler, rebuild
from rummy_platform.tls import dial

#: Largest request message a server accepts (and a client of ours sends), in bytes.
MAX_REQUEST_BYTES = 64 * 1024
#: Largest response message a server sends (and a client of ours receives), in bytes.
MAX_RESPONSE_BYTES = 4 * 1024 * 1024

#: ``grpc.server`` options of every service.
SERVER_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.max_receive_message_length", MAX_REQUEST_BYTES),
    ("grpc.max_send_message_length", MAX_RESPONSE_BYTES),
)
#: Channel options of every client of the services (bots, ops tools, service to service).
CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.max_send_message_length", MAX_REQUEST_BYTES),
    ("grpc.max_receive_message_length", MAX_RESPONSE_BYTES),
)

#: Ids: table and hand ids are UUIDs (36 bytes), request ids a UUID or similar token.
MAX_TABLE_ID_BYTES = 64
#: An IANA time zone name (the longest the standard library knows is 32 bytes).
MAX_TIME_ZONE_BYTES = 64
MAX_HAND_ID_BYTES = 64
MAX_CLIENT_REQUEST_ID_BYTES = 64
#: Account ids and grant idempotency keys are chosen by operators: more room, still bounded.
MAX_ACCOUNT_ID_BYTES = 128
MAX_IDEMPOTENCY_KEY_BYTES = 128
MAX_NAME_BYTES = 64
MAX_MEMO_BYTES = 256
#: Why an operator closes a table (CloseTable), recorded on TableClosing.
MAX_REASON_BYTES = 200
MAX_PAGE_TOKEN_BYTES = 64
MAX_CLIENT_SEED_BYTES = 64
MAX_VARIANT_BYTES = 32
#: A card's display label ("10S", "JK"); readers go by its index.
MAX_CARD_FACE_BYTES = 8
#: The packed command of ``PlayRequest.command`` (a ``google.protobuf.Any``'s ``value``): a
#: variant's command message, whose own fields are then held to these limits once unpacked (4 KiB:
#: the largest a rule allows today, an Indian Declare of 13 groups of 14 cards with 8-byte faces,
#: is about 2.8 KiB).
MAX_COMMAND_BYTES = 4096

#: The limit of every string, bytes and repeated field of the requests the hosts own, by field
#: name; a variant's own fields (its commands', its older RPCs') are its bundle's, per variant
#: (:func:`register_field_limits`): two variants may limit a field of the same name differently
#: (Indian points' ``cards`` of a declared group: 14; gin's of a named meld: 10).
FIELD_LIMITS: Mapping[str, int] = {
    "table_id": MAX_TABLE_ID_BYTES,
    "hand_id": MAX_HAND_ID_BYTES,
    "client_request_id": MAX_CLIENT_REQUEST_ID_BYTES,
    "account_id": MAX_ACCOUNT_ID_BYTES,
    "idempotency_key": MAX_IDEMPOTENCY_KEY_BYTES,
    "name": MAX_NAME_BYTES,
    "memo": MAX_MEMO_BYTES,
    "reason": MAX_REASON_BYTES,
    "page_token": MAX_PAGE_TOKEN_BYTES,
    "client_seed": MAX_CLIENT_SEED_BYTES,
    "variant": MAX_VARIANT_BYTES,
    "face": MAX_CARD_FACE_BYTES,
    "value": MAX_COMMAND_BYTES,
    "time_zone": MAX_TIME_ZONE_BYTES,
}
#: variant name -> its own field limits (by field name).
_VARIANT_LIMITS: dict[str, dict[str, int]] = {}


def register_field_limits(variant: str, limits: Mapping[str, int]) -> None:
    """Add ``variant``'s own field limits (bytes or items, by field name; a variant bundle's
    ``install()`` calls it). Another variant may limit a field of the same name differently.
    Raises ValueError for a name the hosts own, or one this variant limited differently
    before."""
    own = _VARIANT_LIMITS.setdefault(variant, {})
    for name, limit in limits.items():
        if name in FIELD_LIMITS or own.get(name, limit) != limit:
            raise ValueError(f"the field limit of {name!r} is set already")
        own[name] = limit


def field_limits(variant: str | None = None) -> Mapping[str, int]:
    """The field limits a request is held to: the hosts' (:data:`FIELD_LIMITS`) and
    ``variant``'s own (a command of that variant's, once unpacked); with no variant (a request
    checked before its variant is known: the interceptor), each variant field's loosest limit
    among the installed variants, which the variant's own check then narrows."""
    variant_payloads.discover()
    if variant is not None:
        return {**_VARIANT_LIMITS.get(variant, {}), **FIELD_LIMITS}
    loosest: dict[str, int] = {}
    for own in _VARIANT_LIMITS.values():
        for name, limit in own.items():
            loosest[name] = max(limit, loosest.get(name, 0))
    return {**loosest, **FIELD_LIMITS}


#: The limit of a field not in :func:`field_limits` (requests of gRPC's own services, such as
#: health's ``service``); every field of the rummy requests is listed (a test holds it).
DEFAULT_STRING_BYTES = 128
DEFAULT_REPEATED_ITEMS = 64

_SIZED_TYPES = (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES)


def _limit(name: str, descriptor: FieldDescriptor, table: Mapping[str, int]) -> int:
    """The limit of the field ``name`` in ``table`` (:func:`field_limits`), else the default of
    its kind (bytes, or items when ``descriptor`` is repeated)."""
    default = DEFAULT_REPEATED_ITEMS if _is_repeated(descriptor) else DEFAULT_STRING_BYTES
    return table.get(name, default)


def check_request(message: Message, path: str = "", variant: str | None = None) -> None:
    """Raise InvalidArgument naming the first field of ``message`` (nested messages included)
    over its limit (:func:`field_limits` of ``variant``: a variant's command is held to that
    variant's own limits), with its size and the limit."""
    _check(message, path, field_limits(variant))


def _check(message: Message, path: str, table: Mapping[str, int]) -> None:
    """:func:`check_request` against the limits ``table``, made once per request."""
    for descriptor, value in message.ListFields():
        name = f"{path}{descriptor.name}"
        if _is_repeated(descriptor):
            limit = _limit(descriptor.name, descriptor, table)
            if len(value) > limit:
                raise InvalidArgument(f"{name} has {len(value)} items; at most {limit} are allowed")
            if descriptor.type == FieldDescriptor.TYPE_MESSAGE:
                for i, item in enumerate(value):
                    _check(item, f"{name}[{i}].", table)
            elif descriptor.type in _SIZED_TYPES:
                for i, item in enumerate(value):
                    check_size(f"{name}[{i}]", item, limit)
                    check_no_nul(f"{name}[{i}]", item)
        elif descriptor.type == FieldDescriptor.TYPE_MESSAGE:
            _check(value, f"{name}.", table)
        elif descriptor.type in _SIZED_TYPES:
            limit = _limit(descriptor.name, descriptor, table)
            check_size(name, value, limit)
            check_no_nul(name, value)


def check_size(name: str, value: str | bytes, limit: int) -> None:
    """Raise InvalidArgument if ``value`` (a string as UTF-8) is longer than ``limit`` bytes;
    the message names ``name``, the length and the limit, never the value."""
    size = len(value.encode()) if isinstance(value, str) else len(value)
    if size > limit:
        raise InvalidArgument(f"{name} is {size} bytes long; at most {limit} bytes are allowed")


def check_no_nul(name: str, value: str | bytes) -> None:
    """Raise InvalidArgument if the string ``value`` holds a NUL character (U+0000); bytes
    values may hold any byte. The message names ``name``, never the value."""
    if isinstance(value, str) and "\x00" in value:
        raise InvalidArgument(f"{name} contains a NUL character (U+0000), which is not allowed")


_POSITION = re.compile(r"[1-9][0-9]{0,18}")
_MAX_POSITION = 2**63 - 1


def parse_position_token(token: str, name: str = "page_token") -> int | None:
    """The position (a positive int64, e.g. a journal sequence number) a page token names;
    None for an empty token. Raises InvalidArgument for anything else (signs, spaces, non-ASCII
    digits, leading zeros, more than int64) without echoing the token."""
    if not token:
        return None
    if _POSITION.fullmatch(token) is None or int(token) > _MAX_POSITION:
        raise InvalidArgument(f"{name} is not a next_page_token this service returned")
    return int(token)


def parse_id_token(token: str, name: str = "page_token") -> str | None:
    """The id (a UUID in its canonical lower-case form) a page token names; None for an empty
    token. Raises InvalidArgument for anything else, without echoing the token."""
    if not token:
        return None
    try:
        canonical = str(uuid.UUID(token))
    except ValueError:
        canonical = ""
    if canonical != token:
        raise InvalidArgument(f"{name} is not a next_page_token this service returned")
    return token


def open_channel(target: str, tls: TlsSettings | None = None) -> grpc.Channel:
    """A channel to ``target`` with :data:`CHANNEL_OPTIONS` (the message limits): TLS per
    ``tls`` (default: the process's ``RUMMY_TLS_*`` environment), plaintext when that is off
    (:func:`rummy_platform.tls.dial`). Raises ConfigError for a malformed TLS setting."""
    return dial(target, CHANNEL_OPTIONS, tls)


class RequestLimitsInterceptor(grpc.ServerInterceptor):
    """Checks every request of a unary-request RPC with :func:`check_request` before the
    servicer runs, and turns a request that cannot be parsed into INVALID_ARGUMENT. Install it
    inside the error-mapping interceptor (it raises InvalidArgument). :meth:`aio` is the same
    check for a ``grpc.aio`` server."""

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Handler | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler | None:
        handler = continuation(handler_call_details)
        return None if handler is None else _checking(handler)

    def aio(self) -> grpc.aio.ServerInterceptor:
        return AioHandlerInterceptor(lambda handler, _method: _checking(handler, aio=True))

    @staticmethod
    def deserializer(strict: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
        """``strict`` that hands an unparsable request on to :meth:`check` instead of failing
        in gRPC (which would answer INTERNAL)."""
        return _tolerant(strict)

    @staticmethod
    def check(request: Any) -> Any:
        """``request``, once :func:`check_request` passed it; raises InvalidArgument (also for a
        request :meth:`deserializer` could not parse)."""
        return _checked(request)


def _checking(handler: Handler, *, aio: bool = False) -> Handler:
    """``handler`` checking its request first (a request-streaming one as it is)."""
    if handler.request_streaming:
        return handler

    def unary(behavior: Callable[..., Any]) -> Callable[..., Any]:
        if aio:

            async def call_aio(request: Any, context: Any) -> Any:
                return await behavior(_checked(request), context)

            return call_aio

        def call(request: Any, context: Any) -> Any:
            return behavior(_checked(request), context)

        return call

    def stream(behavior: Callable[..., Any]) -> Callable[..., Any]:
        if not aio:

            def watch(request: Any, context: Any) -> Iterator[Any]:
                yield from behavior(_checked(request), context)

            return watch
        if not inspect.isasyncgenfunction(behavior):
            return unary(behavior)

        async def watch_aio(request: Any, context: Any) -> Any:
            async for response in behavior(_checked(request), context):
                yield response

        return watch_aio

    return rebuild(handler, unary, stream, _tolerant(handler.request_deserializer))


class _Undecodable:
    """What the tolerant deserializer hands on for bytes that are no valid request."""

    def __init__(self, error: Exception) -> None:
        self.error = error


def _tolerant(deserialize: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if deserialize is None:
        return None
    strict = deserialize

    def parse(data: bytes) -> Any:
        try:
            return strict(data)
        except Exception as exc:
            return _Undecodable(exc)

    return parse


def _checked(request: Any) -> Any:
    if isinstance(request, _Undecodable):
        raise InvalidArgument(
            f"the request could not be parsed ({type(request.error).__name__}); "
            "string fields must be valid UTF-8"
        )
    if isinstance(request, Message):
        check_request(request)
    return request


def _is_repeated(descriptor: FieldDescriptor) -> bool:
    return bool(descriptor.is_repeated)
