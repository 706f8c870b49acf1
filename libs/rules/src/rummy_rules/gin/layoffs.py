"""The defender's best lay-offs onto the knocker's melds, and the knocker's arrangement.

Rules: ``docs/rules/gin.md#layoffs`` (rulebook "Knocking", steps 5-6): a set of three takes its
fourth card; a run takes the next card of its suit at either end, and chains (a card laid off
extends the run for the next, several cards at one end); the defender may break its own melds to
lay off; the knocker never lays off. The server lays off at the defender's best: the least deadwood
left (points) after the lay-offs and the best arrangement of the cards kept; among equal ones the
fewest cards, then the first in canonical order. ``docs/rules/gin.md#knocker-melds``: without named
melds, the knocker's arrangement is the one of its best that leaves the defender the highest
deadwood after lay-offs (the fewest points to lay off); ties: the first in tie-break order.

Cards are those of ``rummy_rules.gin.arrangement``; bad or repeated cards raise ``GinCardError``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rummy_rules.cards import Card

from . import solver
from .arrangement import (
    Arrangement,
    GinCardError,
    GinMeld,
    MeldShape,
    best_arrangements_of_mask,
    card_at,
    card_index,
    hand_mask,
    mask_indices,
)


@dataclass(frozen=True, slots=True)
class Layoff:
    """One card the defender lays off, onto ``meld`` (an index into the knocker's melds)."""

    card: Card
    meld: int


@dataclass(frozen=True, slots=True)
class LayoffResult:
    """The defender after its best lay-offs.

    ``layoffs`` in canonical card order; ``kept`` the best arrangement of the cards it keeps;
    ``deadwood`` its points (the defender's deadwood after lay-offs); ``deadwood_before`` the
    deadwood of all ten cards with no lay-off.
    """

    layoffs: tuple[Layoff, ...]
    kept: Arrangement
    deadwood: int
    deadwood_before: int

    @property
    def points_laid_off(self) -> int:
        """How much the lay-offs lowered the defender's deadwood (points)."""
        return self.deadwood_before - self.deadwood


def _spots(defender: int, melds: Sequence[GinMeld]) -> tuple[int, list[tuple[int, list[int]]]]:
    """The defender's cards a set takes (one mask) and each run end's chain: (meld index, the
    defender's bits outward from the end, in order)."""
    set_spots = 0
    chains: list[tuple[int, list[int]]] = []
    for i, meld in enumerate(melds):
        indices = sorted(card_index(c) for c in meld.cards)
        if meld.shape is MeldShape.SET:
            if len(indices) == 3:
                rank = indices[0] % 13
                suits = {x // 13 for x in indices}
                (missing,) = {0, 1, 2, 3} - suits
                bit = 1 << (missing * 13 + rank)
                if defender & bit:
                    set_spots |= bit
            continue
        suit, lo, hi = indices[0] // 13, indices[0] % 13, indices[-1] % 13
        down: list[int] = []
        r = lo - 1
        while r >= 0 and defender >> (suit * 13 + r) & 1:
            down.append(1 << (suit * 13 + r))
            r -= 1
        up: list[int] = []
        r = hi + 1
        while r < 13 and defender >> (suit * 13 + r) & 1:
            up.append(1 << (suit * 13 + r))
            r += 1
        chains += [(i, down), (i, up)]
    return set_spots, chains


def _reach(laid: int, set_spots: int, chains: list[tuple[int, list[int]]]) -> int:
    reached = laid & set_spots
    for _, chain in chains:
        for bit in chain:
            if not laid & bit:
                break
            reached |= bit
    return reached


def best_layoffs(defender_cards: Iterable[Card], knocker_melds: Sequence[GinMeld]) -> LayoffResult:
    """The defender's best lay-offs onto ``knocker_melds`` (``docs/rules/gin.md#layoffs``).

    Every set of lay-offs the rules allow is tried (chains, breaking the defender's own melds),
    each with the exact best arrangement of the cards kept. Raises GinCardError for bad cards or
    a defender card that is also in a knocker's meld.
    """
    defender = hand_mask(defender_cards)
    for meld in knocker_melds:
        if hand_mask(meld.cards) & defender:
            raise GinCardError("a defender's card is in the knocker's melds")
    set_spots, chains = _spots(defender, knocker_melds)
    candidates = set_spots
    for _, chain in chains:
        for bit in chain:
            candidates |= bit
    before = solver.deadwood(defender)
    best_key: tuple[int, int, tuple[int, ...]] = (before, 0, ())
    best_laid = 0
    laid = candidates
    while laid:  # every non-empty subset of the candidates
        if _reach(laid, set_spots, chains) == laid:
            key = (solver.deadwood(defender & ~laid), laid.bit_count(), mask_indices(laid))
            if key < best_key:
                best_key, best_laid = key, laid
        laid = (laid - 1) & candidates
    kept = best_arrangements_of_mask(defender & ~best_laid)[0]
    return LayoffResult(
        _assign(best_laid, set_spots, chains, knocker_melds), kept, kept.deadwood, before
    )


def _assign(
    laid: int,
    set_spots: int,
    chains: list[tuple[int, list[int]]],
    melds: Sequence[GinMeld],
) -> tuple[Layoff, ...]:
    onto: dict[int, int] = {}
    for i, chain in chains:
        for bit in chain:
            if not laid & bit:
                break
            onto.setdefault(bit, i)
    for i, meld in enumerate(melds):
        if meld.shape is MeldShape.SET:
            for bit in _set_missing(meld):
                if laid & set_spots & bit:
                    onto.setdefault(bit, i)
    return tuple(Layoff(card_at(b.bit_length() - 1), onto[b]) for b in sorted(onto))


def _set_missing(meld: GinMeld) -> list[int]:
    indices = [card_index(c) for c in meld.cards]
    rank = indices[0] % 13
    suits = {x // 13 for x in indices}
    return [1 << (k * 13 + rank) for k in range(4) if k not in suits]


@dataclass(frozen=True, slots=True)
class KnockerChoice:
    """The knocker's arrangement and the defender's best answer to it."""

    knocker: Arrangement
    defender: LayoffResult


def knocker_arrangement(
    knocker_cards: Iterable[Card], defender_cards: Iterable[Card]
) -> KnockerChoice:
    """Among the knocker's minimum-deadwood arrangements, the one after which the defender's best
    deadwood is highest; ties: the first in tie-break order (``docs/rules/gin.md#knocker-melds``).
    Raises GinCardError."""
    knocker = hand_mask(knocker_cards)
    defender = tuple(defender_cards)
    if hand_mask(defender) & knocker:
        raise GinCardError("the knocker and the defender hold the same card")
    best: KnockerChoice | None = None
    for arrangement in best_arrangements_of_mask(knocker):
        answer = best_layoffs(defender, arrangement.melds)
        if best is None or answer.deadwood > best.defender.deadwood:
            best = KnockerChoice(arrangement, answer)
    assert best is not None  # a hand has at least one arrangement
    return best
