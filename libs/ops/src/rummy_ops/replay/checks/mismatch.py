"""How a mismatch is told: the first place two rules events or two protobuf messages differ,
cards in the notation, money (a field named ``*_hundredths``, a settlement) in House Tokens
(``13.00``), long values cut short."""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from enum import Enum

from google.protobuf import text_format
from google.protobuf.message import Message

from rummy_ops.money import tokens
from rummy_rules import events as ev
from rummy_rules.cards import Card
from rummy_rules.settlement import Settlement

_MAX_VALUE = 120  # characters of one value in a mismatch line


def show(value: object) -> str:
    """A value as a mismatch line shows it: cards in the notation (``7H``, ``JK``), sequences
    bracketed, records by their fields; cut to ``_MAX_VALUE`` characters."""
    return clip(_text(value))


def _text(value: object) -> str:
    if isinstance(value, Card):
        return value.face
    if isinstance(value, tuple | list):
        if value and all(isinstance(v, Card) for v in value):
            return " ".join(c.face for c in value)
        return "[" + ", ".join(_text(v) for v in value) + "]"
    if is_dataclass(value) and not isinstance(value, type):
        if isinstance(value, Settlement):
            return settlement_text(value)
        body = " ".join(f"{f.name}={_text(getattr(value, f.name))}" for f in fields(value))
        return f"{type(value).__name__}({body})"
    if isinstance(value, Enum):
        return value.name.lower()
    return repr(value)


def clip(text: str) -> str:
    return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 3] + "..."


def _first_difference(name: str, a: object, b: object) -> str:
    """``name.path: recorded .., replay ..`` at the first place two values differ (into tuples of
    equal length and records of one type)."""
    if isinstance(a, Settlement) and isinstance(b, Settlement):
        return f"{name}: recorded {settlement_text(a)}, replay {settlement_text(b)}"
    if (
        isinstance(a, tuple)
        and isinstance(b, tuple)
        and len(a) == len(b)
        and not all(isinstance(x, Card) for x in (*a, *b))
    ):
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(f"{name}[{k}]", x, y)
    if is_dataclass(a) and type(a) is type(b) and not isinstance(a, Card | type):
        for f in fields(a):
            x, y = getattr(a, f.name), getattr(b, f.name)
            if x != y:
                return _first_difference(f"{name}.{f.name}", x, y)
    if _is_money(name, a, b):
        return f"{name}: recorded {tokens(a)} tokens, replay {tokens(b)} tokens"  # type: ignore[arg-type]
    return f"{name}: recorded {show(a)}, replay {show(b)}"


def _is_money(name: str, *values: object) -> bool:
    """A field of money (``amount_hundredths``, ``commission_hundredths``, ``[2]`` of one): shown
    in tokens."""
    field_name = name.rsplit(".", 1)[-1].split("[", 1)[0]
    return field_name.endswith("_hundredths") and all(
        isinstance(v, int) and not isinstance(v, bool) for v in values
    )


def difference(recorded: ev.Event, derived: ev.Event) -> str:
    """What differs between a recorded event and the one the rules derive: for each differing
    field, the first place it differs (``results[1].points: recorded 30, replay 34``), cards in
    the notation and long values cut short."""
    if type(recorded) is not type(derived):
        return f"recorded {type(recorded).__name__}, the rules give {type(derived).__name__}"
    parts = [
        _first_difference(f.name, getattr(recorded, f.name), getattr(derived, f.name))
        for f in fields(recorded)  # type: ignore[arg-type]
        if getattr(recorded, f.name) != getattr(derived, f.name)
    ]
    return "; ".join(parts) or "differs"


def settlement_text(s: Settlement) -> str:
    """``[s0:0pt/+1.90 s1:20pt/-2.00] commission 0.10``: each seat's points and net, the
    commission (House Tokens)."""
    body = " ".join(f"s{x.seat}:{x.points}pt/{tokens(x.amount_hundredths, True)}" for x in s.lines)
    return clip(f"[{body}] commission {tokens(s.commission_hundredths)}")


def pb_diff(got: Message, want: Message) -> str:
    """The first field where two messages of one type differ: ``name: recorded .., replay ..``
    (cards by face, long values cut short)."""
    if _is_card(got):
        return f"recorded {_pb_text(got)}, replay {_pb_text(want)}"
    for fd in got.DESCRIPTOR.fields:
        a, b = getattr(got, fd.name), getattr(want, fd.name)
        if a == b:
            continue
        if fd.is_repeated and len(a) == len(b):
            k = next(k for k, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
            a, b, name = a[k], b[k], f"{fd.name}[{k}]"
            if isinstance(a, Message) and not _is_card(a):
                return f"{name}.{pb_diff(a, b)}"
            return f"{name}: recorded {_pb_text(a, name)}, replay {_pb_text(b, name)}"
        if isinstance(a, Message) and not fd.is_repeated and not _is_card(a):
            return f"{fd.name}.{pb_diff(a, b)}"
        return f"{fd.name}: recorded {_pb_text(a, fd.name)}, replay {_pb_text(b, fd.name)}"
    return "differs"


def _is_card(value: object) -> bool:
    return isinstance(value, Message) and value.DESCRIPTOR.full_name == "rummy.common.v1.Card"


def _pb_text(value: object, name: str = "") -> str:
    """A protobuf field value in a mismatch line: a card by face, a repeated field item by item,
    a message on one line, bytes in hex, money (field ``name`` ``*_hundredths``) in tokens; at
    most 40 characters."""
    if _is_money(name, value):
        text = f"{tokens(value)} tokens"  # type: ignore[arg-type]
    elif _is_card(value):
        text = value.face or f"#{value.index}"  # type: ignore[attr-defined]
    elif isinstance(value, bytes):
        text = value.hex()
    elif isinstance(value, Message):
        text = text_format.MessageToString(value, as_one_line=True)
    elif isinstance(value, str | int | float | bool):
        text = str(value)
    else:  # a repeated field
        text = "[" + " ".join(_pb_text(v) for v in value) + "]"  # type: ignore[attr-defined]
    return text if len(text) <= 40 else text[:37] + "..."
