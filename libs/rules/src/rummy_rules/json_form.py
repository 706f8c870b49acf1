"""Events and commands to and from plain JSON-able dicts, exactly (``from_dict(to_dict(x)) == x``).

Format: a message is ``{"type": <tag>, <field>: <value>, ...}``. Its tag is stable and namespaced
(``table.HandStarted``, ``indian.Declared``, ``gin.Knocked``, ``match.DealScored``: the namespace
says whose message it is, so two variants may both have a ``Declared``), declared beside its class
(``@json_form.tag("indian.Declared")``) and independent of the class's Python name; the list of
every tag is ``docs/rules/event-tags.md``. Values:

- a card is its face and copy joined by a colon: ``"7H:0"``, ``"10S:1"``, ``"JK:1"``;
- an enum is its value; a tuple is a list; ``None`` is ``null``;
- a nested frozen dataclass (a rule set, a seat result) is a dict of its fields, without a type tag,
  except in a field declared as a base class that is not a dataclass (a rule set's
  ``options: VariantOptions``): there it carries its registered ``type`` like a message;
- a field with a default may be missing (a record written before the field existed): it decodes
  to the default;
- a ``dict`` field is a list of ``[key, value]`` pairs (JSON keys could only be strings).

Message classes register themselves (``register``, under their tag) in the module that defines
them; a variant's own messages are known once its package is imported. ``from_dict`` first upcasts
a record of an older shape (bare class-name tags, old field names: :mod:`rummy_rules.upcast`),
then raises ``CodecError`` for an unknown type, a missing or extra field, or a value of the wrong
shape.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Callable
from enum import Enum
from typing import Any, TypeVar

from .cards import Card, CardParseError, parse_card
from .upcast import upcast

T = TypeVar("T")
#: The one registry: tag -> message class (``register``).
_REGISTRY: dict[str, type] = {}
_HINTS: dict[type, dict[str, Any]] = {}
#: The class attribute a tag is declared in (by :func:`tag`).
TAG_ATTRIBUTE = "codec_tag"
#: A tag: ``<namespace>.<Name>``, the namespace lower case (``table``, ``match``, a variant's).
TAG_SHAPE = re.compile(r"[a-z][a-z0-9_-]*\.[A-Z][A-Za-z0-9]*")


class CodecError(ValueError):
    """A dict that does not decode to a registered message."""


def tag(name: str) -> Callable[[type[T]], type[T]]:
    """Class decorator: the stable tag ``name`` (``<namespace>.<Name>``, :data:`TAG_SHAPE`) a
    message class is stored under. Raises ValueError for a tag of another shape."""
    if not TAG_SHAPE.fullmatch(name):
        raise ValueError(f"a tag is <namespace>.<Name> (such as indian.Declared), not {name!r}")

    def declare(cls: type[T]) -> type[T]:
        setattr(cls, TAG_ATTRIBUTE, name)
        return cls

    return declare


def tag_of(cls: type) -> str:
    """The tag declared on ``cls`` itself (not inherited). Raises TypeError when it has none."""
    name = vars(cls).get(TAG_ATTRIBUTE)
    if not isinstance(name, str):
        raise TypeError(f'{cls.__name__} declares no tag (@json_form.tag("<namespace>.<Name>"))')
    return name


def register(*classes: type[T]) -> None:
    """Make dataclass message types decodable by their tag (:func:`tag`). Tags must be unique.
    Raises TypeError for a class that is not a dataclass, has no tag, or whose tag another
    class holds."""
    for cls in classes:
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"{cls.__name__} is not a dataclass")
        name = tag_of(cls)
        known = _REGISTRY.get(name)
        if known is not None and known is not cls:
            raise TypeError(f"two message types tagged {name}: {known.__name__}, {cls.__name__}")
        _REGISTRY[name] = cls


def registered(name: str) -> type | None:
    """The message class registered under the tag ``name``, or None."""
    return _known(name)


def tags() -> dict[str, type]:
    """Every tag registered so far -> its class (after discovering the installed variants)."""
    from . import registry

    registry.discover()
    return dict(sorted(_REGISTRY.items()))


def _known(name: str) -> type | None:
    """The class registered under ``name``; on a miss, the installed variant bundles are
    discovered first (``rummy_rules.registry.discover``: a variant's classes register when its
    package is imported) and the name looked up again."""
    cls = _REGISTRY.get(name)
    if cls is None:
        from . import registry  # the registry imports the variant interface, which imports this

        registry.discover()
        cls = _REGISTRY.get(name)
    return cls


def card_to_str(card: Card) -> str:
    """``Card`` -> ``"7H:1"`` (face, colon, copy)."""
    return f"{card.face}:{card.copy}"


def card_from_str(text: str) -> Card:
    """``"7H:1"`` -> ``Card``. Raises CodecError."""
    if not isinstance(text, str) or text.count(":") != 1:
        raise CodecError(f"not a card: {text!r} (expected FACE:COPY such as 7H:0)")
    face, copy = text.split(":")
    try:
        return parse_card(face, int(copy))
    except (CardParseError, ValueError) as exc:
        raise CodecError(f"not a card: {text!r} ({exc})") from None


def to_dict(message: Any) -> dict[str, Any]:
    """A registered message (event or command) as a JSON-able dict with its ``type`` tag."""
    cls = type(message)
    name = vars(cls).get(TAG_ATTRIBUTE)
    if not isinstance(name, str) or _known(name) is not cls:
        raise CodecError(f"{cls.__name__} is not a registered message type")
    out: dict[str, Any] = {"type": name}
    out.update(_encode_fields(message))
    return out


def from_dict(data: dict[str, Any]) -> Any:
    """The message a ``to_dict`` dict stands for, in today's shape (a record of an older shape
    is upcast first: :mod:`rummy_rules.upcast`). Raises CodecError."""
    data = upcast(data)
    if not isinstance(data, dict) or "type" not in data:
        raise CodecError("a message is a dict with a 'type' field")
    cls = _known(data["type"]) if isinstance(data["type"], str) else None
    if cls is None:
        raise CodecError(f"unknown message type {data['type']!r} (is its variant imported?)")
    body = {k: v for k, v in data.items() if k != "type"}
    return _decode_dataclass(cls, body)


def _encode_fields(obj: Any) -> dict[str, Any]:
    hints = _hints(type(obj))
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        out[f.name] = to_dict(value) if _is_open(hints[f.name]) else _encode(value)
    return out


def _is_open(hint: Any) -> bool:
    """A field declared as a base class that is not a dataclass: its value is tagged."""
    return (
        isinstance(hint, type)
        and not dataclasses.is_dataclass(hint)
        and hint is not Card
        and (hint not in (bool, int, str) and not issubclass(hint, Enum))
    )


def _encode(value: Any) -> Any:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, Card):
        return card_to_str(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, tuple | list | frozenset):
        items = sorted(value) if isinstance(value, frozenset) else value
        return [_encode(v) for v in items]
    if isinstance(value, dict):
        return [[_encode(k), _encode(v)] for k, v in value.items()]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _encode_fields(value)
    raise CodecError(f"cannot encode a {type(value).__name__}")


def _hints(cls: type) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        hints = typing.get_type_hints(cls)
        _HINTS[cls] = hints
    return hints


def _decode_dataclass(cls: type, body: Any) -> Any:
    if not isinstance(body, dict):
        raise CodecError(f"{cls.__name__}: expected an object, got {body!r}")
    hints = _hints(cls)
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    extra = set(body) - set(names)
    if extra:
        raise CodecError(f"{cls.__name__}: unknown fields {sorted(extra)}")
    kwargs = {}
    defaulted = {
        f.name
        for f in dataclasses.fields(cls)
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
    }
    for name in names:
        if name not in body:
            if name in defaulted:
                continue
            raise CodecError(f"{cls.__name__}: missing field {name!r}")
        kwargs[name] = _decode(hints[name], body[name], f"{cls.__name__}.{name}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise CodecError(f"{cls.__name__}: {exc}") from None


def _decode(hint: Any, value: Any, where: str) -> Any:  # noqa: C901 - one branch per shape
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        if value is None:
            if type(None) in args:
                return None
            raise CodecError(f"{where}: null is not allowed")
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _decode(arg, value, where)
            except CodecError as exc:
                errors.append(str(exc))
        raise CodecError("; ".join(errors))
    if origin is tuple:
        args = typing.get_args(hint)
        if not isinstance(value, list):
            raise CodecError(f"{where}: expected a list, got {value!r}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v, where) for v in value)
        if len(args) != len(value):
            raise CodecError(f"{where}: expected {len(args)} items")
        return tuple(_decode(a, v, where) for a, v in zip(args, value, strict=True))
    if origin is frozenset:
        (arg,) = typing.get_args(hint)
        if not isinstance(value, list):
            raise CodecError(f"{where}: expected a list, got {value!r}")
        return frozenset(_decode(arg, v, where) for v in value)
    if origin is dict:
        key_hint, val_hint = typing.get_args(hint)
        if not isinstance(value, list) or not all(
            isinstance(p, list) and len(p) == 2 for p in value
        ):
            raise CodecError(f"{where}: expected a list of [key, value] pairs")
        return {_decode(key_hint, k, where): _decode(val_hint, v, where) for k, v in value}
    if hint is Any:
        return value
    if hint is Card:
        return card_from_str(value)
    if isinstance(hint, type) and issubclass(hint, Enum):
        try:
            return hint(value)
        except ValueError:
            raise CodecError(f"{where}: {value!r} is not a {hint.__name__}") from None
    if hint is bool:
        if not isinstance(value, bool):
            raise CodecError(f"{where}: expected true or false, got {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise CodecError(f"{where}: expected an integer, got {value!r}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise CodecError(f"{where}: expected a string, got {value!r}")
        return value
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _decode_dataclass(hint, value)
    if _is_open(hint):
        kind = value.get("type") if isinstance(value, dict) else None
        cls = _known(kind) if isinstance(kind, str) else None
        if cls is None or not issubclass(cls, hint):
            raise CodecError(f"{where}: expected a registered {hint.__name__}, got {kind!r}")
        return _decode_dataclass(cls, {k: v for k, v in value.items() if k != "type"})
    raise CodecError(f"{where}: cannot decode into {hint!r}")
