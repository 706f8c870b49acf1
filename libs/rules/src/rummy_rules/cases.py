"""Rules cases a variant judges for the ``rummy-rules evaluate`` CLI (``rummy_rules.cli``): each
variant brings its own games (:class:`CaseGames`, registered by its bundle's ``install()``), the
CLI reads the lines, dispatches each by its ``game`` field and writes the answers.

A case is a JSON object with at least ``id`` and ``game``; what else it holds and what its answer
holds are the variant's (its rules document says). A judge raises :class:`CaseError` for a
malformed case; the CLI writes ``{"id", "error"}`` and goes on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .cards import Card, CardParseError, parse_cards


class CaseError(ValueError):
    """A case line that cannot be judged (bad JSON, fields, cards, or a value the game has
    not)."""


@dataclass(frozen=True)
class CaseFlag:
    """A switch of the CLI a variant's judge reads: ``--<name>`` (store true), with ``help``."""

    name: str
    help: str


#: ``(game, the decoded case, the CLI switches given) -> the answer object``; raises CaseError.
Judge = Callable[[str, Mapping[str, Any], frozenset[str]], dict[str, Any]]


@dataclass(frozen=True)
class CaseGames:
    """One variant's rules cases: the ``games`` it judges (``"indian13"``), its ``judge`` and the
    CLI switches it reads (``flags``)."""

    games: tuple[str, ...]
    judge: Judge
    flags: tuple[CaseFlag, ...] = ()


_GAMES: dict[str, CaseGames] = {}


def register(cases: CaseGames) -> None:
    """Make ``cases``'s games judged by it. Raises ValueError for a game another judges."""
    for game in cases.games:
        known = _GAMES.get(game)
        if known is not None and known != cases:
            raise ValueError(f"another variant judges rules cases of game {game!r}")
        _GAMES[game] = cases


def judges() -> tuple[CaseGames, ...]:
    """Every registered variant's cases (the installed bundles discovered first)."""
    from . import registry  # the registry imports the variant interface

    registry.discover()
    return tuple(dict.fromkeys(_GAMES.values()))


def judge_of(game: str) -> CaseGames | None:
    """The cases that judge ``game``, or None."""
    judges()
    return _GAMES.get(game)


# -- helpers the variants' judges share ----------------------------------------------------------


def case_cards(case: Mapping[str, Any], field: str = "cards") -> tuple[Card, ...]:
    """The cards of ``case[field]`` (faces in ``docs/rules/cards.md#notation``). Raises
    CaseError."""
    value = case.get(field)
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise CaseError(f"field {field!r} must be a list of card strings")
    try:
        return parse_cards(value)
    except CardParseError as exc:
        raise CaseError(str(exc)) from None


def check_decks(case: Mapping[str, Any], field: str = "cards") -> None:
    """Raise CaseError when ``case["decks"]`` (optional) is no positive integer or a face of
    ``case[field]`` appears more often than that."""
    decks = case.get("decks")
    if decks is None:
        return
    if not isinstance(decks, int) or isinstance(decks, bool) or decks < 1:
        raise CaseError("field 'decks' must be a positive integer")
    cards = case.get(field) or []
    face, count = Counter(c.strip().upper() for c in cards).most_common(1)[0] if cards else ("", 0)
    if count > decks:
        raise CaseError(f"{face} appears {count} times but the shoe has {decks} decks")
