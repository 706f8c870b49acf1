"""Money by match format: what is reserved, and who pays whom at the end of a match or a game.

Every amount is an int of hundredths of a House Token. Pure functions of their inputs;
every settlement they return sums to zero with its commission line, and no seat pays more than
it holds (``docs/rules/formats.md#money``).

- **Entry fee** (pool, deals, best of N): each seat's entry is reserved when the match starts
  (:func:`entry_reservations`), a rejoin reserves one more entry; the prize pool is the sum of
  every entry held. At the end (:func:`settle_winner`) the winner receives the pool less the
  commission and every other seat forfeits what it holds. The commission is
  ``floor(pool x commission_bps / 10000)``: rounded down, so the fraction of a hundredth stays
  with the winner (the players' favour) and the house never takes more than the stated rate.
  The winner's line is its net: ``pool - commission - its own entries``.
- **Split** (pool option, :func:`settle_split`): the pool less the same commission is shared
  equally among the seats left; the remainder hundredths go one each to the lowest totals first
  (ties: the earliest seat), as a shared pot's do (``docs/rules/money.md#shared-pot``).
  Each line is that share less the seat's own entries.
- **Aborted or closed match** (:func:`release_all`): every hold released, nothing moves (all
  lines 0, commission 0).
- **Game stakes** (game to N, :func:`game_stake_hundredths`, :func:`settle_game`): ``cap x point
  value`` is reserved from each seat at the game start; at the game end each loser pays
  ``min(winner's total - loser's total, cap) x point value`` (a seat that forfeited the game:
  ``cap x point value``), the commission is ``floor(paid x commission_bps / 10000)`` and the
  winner receives the rest.
- **Hollywood** (:func:`settle_nets` of :func:`add_nets` of each column's :func:`game_nets`):
  ``3 x cap x point value`` reserved at the match start; the result is the sum of the three
  columns' capped nets, paid by the seat below 0 to the one above, less the same commission.
- A free table (entry 0, point value 0) moves nothing and plays the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..settlement import commission_for


@dataclass(frozen=True)
class MoneyLine:
    """One seat's money at a settlement: ``held_hundredths`` it had reserved, ``amount_hundredths``
    moved
    (negative: it pays, at most what it holds; positive: it receives). What it holds and does
    not pay is released."""

    seat: int
    held_hundredths: int
    amount_hundredths: int


@dataclass(frozen=True)
class MatchSettlement:
    """The money of a match (entry fees) or of one game (game stakes).

    ``pool_hundredths``: what was at stake (the prize pool; for a game, what the losers pay);
    ``commission_hundredths``: the house line; ``lines``: one per seat that held money, ascending
    seats; ``winners``: the seats that receive (several for a split). Always
    ``sum(amount_hundredths) + commission_hundredths == 0`` and ``-amount_hundredths <=
    held_hundredths``.
    """

    pool_hundredths: int
    commission_bps: int
    commission_hundredths: int
    lines: tuple[MoneyLine, ...]
    winners: tuple[int, ...]

    def amount_for(self, seat: int) -> int:
        """The amount moved for ``seat``. Raises KeyError if it held nothing here."""
        for line in self.lines:
            if line.seat == seat:
                return line.amount_hundredths
        raise KeyError(seat)


def entry_reservations(seats: Iterable[int], entry_hundredths: int) -> tuple[tuple[int, int], ...]:
    """``(seat, entry_hundredths)`` for every seat, ascending: what is reserved at the match start.
    Raises ValueError for a negative entry."""
    if entry_hundredths < 0:
        raise ValueError(f"an entry fee must be >= 0 cents, got {entry_hundredths}")
    return tuple((seat, entry_hundredths) for seat in sorted(set(seats)))


def _held(held: Mapping[int, int]) -> dict[int, int]:
    for seat, cents in held.items():
        if cents < 0:
            raise ValueError(f"seat {seat} holds a negative amount ({cents})")
    return dict(sorted(held.items()))


def settle_winner(held: Mapping[int, int], winner: int, commission_bps: int) -> MatchSettlement:
    """The end of an entry-fee match won by ``winner``: ``held`` maps every seat that paid an
    entry (a seat that left or was eliminated included) to the entries it holds (cents).

    The winner's line is ``pool - commission - held[winner]``; every other line is
    ``-held[seat]``. Raises ValueError if the winner holds no entry, a hold is negative or the
    commission is out of 0..10000 bps."""
    lines = _held(held)
    if winner not in lines:
        raise ValueError(f"the winner (seat {winner}) holds no entry in this match")
    pool = sum(lines.values())
    house = commission_for(pool, commission_bps)
    return MatchSettlement(
        pool_hundredths=pool,
        commission_bps=commission_bps,
        commission_hundredths=house,
        lines=tuple(
            MoneyLine(seat, cents, pool - house - cents if seat == winner else -cents)
            for seat, cents in lines.items()
        ),
        winners=(winner,),
    )


def settle_split(
    held: Mapping[int, int], totals_left: Mapping[int, int], commission_bps: int
) -> MatchSettlement:
    """The split of a pool: ``held`` as in :func:`settle_winner`; ``totals_left`` maps each seat
    still in the match to its running total (points). The pool less the commission is shared
    equally among them; the remainder hundredths (fewer than the seats left) go one each to the
    lowest totals first (ties: the earliest seat). Raises ValueError with fewer than two seats
    left or a seat left that holds nothing."""
    lines = _held(held)
    if len(totals_left) < 2:
        raise ValueError("a split needs at least two seats left")
    missing = sorted(set(totals_left) - set(lines))
    if missing:
        raise ValueError(f"seats {missing} hold no entry in this match")
    pool = sum(lines.values())
    house = commission_for(pool, commission_bps)
    share, remainder = divmod(pool - house, len(totals_left))
    order = sorted(totals_left, key=lambda seat: (totals_left[seat], seat))
    takings = {seat: share + (1 if i < remainder else 0) for i, seat in enumerate(order)}
    return MatchSettlement(
        pool_hundredths=pool,
        commission_bps=commission_bps,
        commission_hundredths=house,
        lines=tuple(
            MoneyLine(seat, cents, takings.get(seat, 0) - cents) for seat, cents in lines.items()
        ),
        winners=tuple(sorted(totals_left)),
    )


def release_all(held: Mapping[int, int], commission_bps: int = 0) -> MatchSettlement:
    """An aborted or closed match (or game): every hold released, nothing moves."""
    lines = _held(held)
    return MatchSettlement(
        pool_hundredths=sum(lines.values()),
        commission_bps=commission_bps,
        commission_hundredths=0,
        lines=tuple(MoneyLine(seat, cents, 0) for seat, cents in lines.items()),
        winners=(),
    )


def game_stake_hundredths(max_game_points: int, point_value_hundredths: int) -> int:
    """What each seat reserves at a game's start: ``max_game_points x point_value_hundredths``.
    Raises ValueError for a cap below 1 or a negative point value."""
    if max_game_points < 1:
        raise ValueError(f"max_game_points must be >= 1, got {max_game_points}")
    if point_value_hundredths < 0:
        raise ValueError(f"point_value_hundredths must be >= 0, got {point_value_hundredths}")
    return max_game_points * point_value_hundredths


def settle_game(
    totals: Mapping[int, int],
    winner: int,
    *,
    max_game_points: int,
    point_value_hundredths: int,
    commission_bps: int,
    forfeited: Iterable[int] = (),
) -> MatchSettlement:
    """The end of one game to N won by ``winner``: ``totals`` maps every seat that reserved the
    game's stake to its game total (points, may be negative); ``forfeited`` seats (left, or
    lost the game on missed turns) lose at the cap.

    Each other seat pays ``min(max(winner's total - its total, 0), cap) x point value`` (a
    forfeited seat ``cap x point value``); the commission is taken once from what is paid; the
    winner receives the rest. Raises ValueError if the winner has no total or forfeited."""
    out = frozenset(forfeited)
    if winner not in totals:
        raise ValueError(f"the winner (seat {winner}) played no part in this game")
    if winner in out:
        raise ValueError(f"the winner (seat {winner}) forfeited this game")
    stake = game_stake_hundredths(max_game_points, point_value_hundredths)
    nets = game_nets(totals, winner, max_game_points=max_game_points, forfeited=out)
    return settle_nets(
        nets,
        winner,
        held_hundredths=stake,
        point_value_hundredths=point_value_hundredths,
        commission_bps=commission_bps,
    )


def game_nets(
    totals: Mapping[int, int],
    winner: int,
    *,
    max_game_points: int,
    forfeited: Iterable[int] = (),
) -> dict[int, int]:
    """One game's capped nets (points, summing to 0): each other seat loses
    ``min(max(winner's total - its total, 0), cap)`` (a ``forfeited`` seat: the cap) and the
    winner wins their sum. Raises ValueError if the winner has no total."""
    if winner not in totals:
        raise ValueError(f"the winner (seat {winner}) played no part in this game")
    out = frozenset(forfeited)
    top = totals[winner]
    nets = {
        seat: -(max_game_points if seat in out else min(max(top - total, 0), max_game_points))
        for seat, total in totals.items()
        if seat != winner
    }
    nets[winner] = -sum(nets.values())
    return dict(sorted(nets.items()))


def add_nets(*games: Mapping[int, int]) -> dict[int, int]:
    """The sum of several games' nets, seat by seat (Hollywood: the three columns')."""
    out: dict[int, int] = {}
    for nets in games:
        for seat, points in nets.items():
            out[seat] = out.get(seat, 0) + points
    return dict(sorted(out.items()))


def settle_nets(
    nets: Mapping[int, int],
    winner: int,
    *,
    held_hundredths: int,
    point_value_hundredths: int,
    commission_bps: int,
) -> MatchSettlement:
    """Game stakes paid on net points (``docs/rules/formats.md#money``): ``nets`` maps every
    seat that holds ``held_hundredths`` to its net (points, signed, summing to 0); each seat below 0
    pays ``-net x point_value_hundredths``; the commission ``floor(paid x commission_bps / 10000)``
    (:func:`rummy_rules.settlement.commission_for`, rounded down in the players' favour) is taken
    once from what is paid and ``winner`` receives the rest. ``winner`` is the one seat that
    may be above 0 (it is named even when every net is 0: the settlement's receiving seat).

    Used for one game (:func:`settle_game`: one winner, each loser's net capped) and for a
    Hollywood match (the three columns' capped nets added). Raises ValueError if the nets do
    not sum to 0, a seat other than ``winner`` is above 0, ``winner`` has no net, or a seat
    would pay more than it holds."""
    if winner not in nets:
        raise ValueError(f"the winner (seat {winner}) has no net in this settlement")
    if sum(nets.values()) != 0:
        raise ValueError(f"the nets must sum to 0, got {dict(nets)}")
    above = sorted(seat for seat, net in nets.items() if net > 0 and seat != winner)
    if above:
        raise ValueError(f"only the winner (seat {winner}) may receive; seats {above} are above 0")
    if held_hundredths < 0 or point_value_hundredths < 0:
        raise ValueError("holds and the point value are >= 0 hundredths")
    pays = {seat: -net * point_value_hundredths for seat, net in nets.items() if net < 0}
    over = sorted(seat for seat, cents in pays.items() if cents > held_hundredths)
    if over:
        raise ValueError(f"seats {over} would pay more than the {held_hundredths} they hold")
    paid = sum(pays.values())
    house = commission_for(paid, commission_bps)
    return MatchSettlement(
        pool_hundredths=paid,
        commission_bps=commission_bps,
        commission_hundredths=house,
        lines=tuple(
            MoneyLine(seat, held_hundredths, paid - house if seat == winner else -pays.get(seat, 0))
            for seat in sorted(nets)
        ),
        winners=(winner,),
    )
