"""What the demo plays: the tables (:class:`TablePlan`, :data:`DEFAULT_TABLES`), the tables of
each game (:func:`games`: points and the games the installed variants declare) and the run's options
(:class:`DemoOptions`). Money in hundredths of a House Token, times in rule-set seconds."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from google.protobuf import any_pb2

from rummy.common.v1 import cards_pb2
from rummy.match.v1 import match_pb2 as match_pb
from rummy_game.bundle import DemoTable, bundles
from rummy_ops.bots.strategy import MatchTemperament


@dataclass(frozen=True)
class TablePlan:
    """A table to open: ``point_value_hundredths`` per point (0 = free), ``commission_bps`` on
    the winner's take (basis points); ``players`` bots are seated (default: every seat).

    ``match``: the table's match format (``OpenTableRequest.match``; None: a points table). A
    format table has point value 0 (the format owns the money: its entry fees), its
    ``commission_bps`` is taken on the prize pool, every seat is taken (the match starts when
    all are), and it plays one match to its end (not a share of the hands); its bots play the
    match as ``bots_match`` says (rejoin offers, split requests)."""

    name: str
    seats: int
    point_value_hundredths: int
    commission_bps: int
    players: int | None = None
    match: match_pb.MatchOptions | None = field(default=None, compare=False)
    bots_match: MatchTemperament = MatchTemperament()
    #: The table's variant (``""``: the demo's rule set's, ``DemoOptions.rule_set``).
    variant: str = ""
    #: The variant's own options for this table, packed as ``RuleSet.variant_options.
    #: other_variant`` takes them (None: the variant's house rules; the demo host never reads
    #: inside: only the variant does, at OpenTable).
    variant_options: any_pb2.Any | None = field(default=None, compare=False)
    #: How many of its bots (the last seats) set themselves a daily loss limit of
    #: ``daily_loss_limit_hundredths`` before they sit down (``SetLossLimit``, as a player does):
    #: once a hand's losses bring them within one reservation of it, the ledger holds their seat
    #: back ("not dealt in") and the table goes on with the others.
    loss_limited: int = 0
    daily_loss_limit_hundredths: int = 0

    @property
    def bots(self) -> int:
        return self.players or self.seats

    @property
    def plays_match(self) -> bool:
        """True at a table of a format other than ``single`` (it plays one match to its end)."""
        return self.match is not None and self.match.WhichOneof("format") not in (None, "single")


#: The points tables of the house variant (``rummy demo --game points``). One bot at each paid
#: table sets a daily loss limit of one reservation (130 points) plus 10 points: after any lost
#: hand (a first drop costs 20) the ledger holds its seat back for the rest of the day.
DEFAULT_TABLES: tuple[TablePlan, ...] = (
    TablePlan("free-4", 4, 0, 0, players=2),  # heads-up
    TablePlan("silver-6", 6, 10, 1000, loss_limited=1, daily_loss_limit_hundredths=14_00),
    TablePlan("gold-8", 8, 25, 500, loss_limited=1, daily_loss_limit_hundredths=35_00),
)


def _plan(table: DemoTable, variant: str) -> TablePlan:
    return TablePlan(
        table.name,
        table.seats,
        table.point_value_hundredths,
        table.commission_bps,
        players=table.players,
        match=table.match,
        bots_match=MatchTemperament(split_at_seats=table.split_at_seats),
        variant=variant,
        variant_options=table.variant_options,
    )


def games() -> dict[str, tuple[TablePlan, ...]]:
    """The tables of each game of ``rummy demo --game``: ``points`` the three points tables
    (:data:`DEFAULT_TABLES`), then every game the installed variants declare
    (``VariantBundle.demo_games``: Indian points' pool 101, pool 201, deals and best of 3).
    Raises ValueError for a game two variants declare."""
    out: dict[str, tuple[TablePlan, ...]] = {"points": DEFAULT_TABLES}
    for bundle in bundles():
        for game in bundle.demo_games:
            if game.name in out:
                raise ValueError(f"two demo games are named {game.name!r}")
            out[game.name] = tuple(_plan(t, bundle.name) for t in game.tables)
    return out


def game_help() -> str:
    """The help of ``rummy demo --game``, from the registry (:func:`bundles`): ``points`` and
    each installed variant's demo games by name (``gin: gin, oklahoma, hollywood; ...``)."""
    declared = "; ".join(
        f"{b.name}: {', '.join(g.name for g in b.demo_games)}" for b in bundles() if b.demo_games
    )
    return (
        "Play only this game's tables: points (the three points tables) or a game an installed "
        "variant declares, one table of its match format played to the match's end "
        f"({declared}). Default: every game."
    )


def default_games() -> tuple[str, ...]:
    """What ``rummy demo`` plays without ``--game``: every game (the points tables' share of the
    hands and each format table's match, side by side)."""
    return tuple(games())


def tables_of(names: Iterable[str]) -> tuple[TablePlan, ...]:
    """The tables of the games ``names`` (of :func:`games`), in that order. Raises KeyError for
    a game it does not know."""
    known = games()
    return tuple(plan for name in names for plan in known[name])


@dataclass(frozen=True)
class DemoOptions:
    """``hands``: hands to play in all, shared among the tables; ``seed``: the bots' randomness;
    ``turn_seconds`` / ``seed_window_seconds`` / ``start_delay_seconds``: the tables' rule-set
    seconds (the services divide them by their ``RUMMY_CLOCK_SPEED``); ``grant_hundredths``: what
    each bot is granted; ``mischief``: scales how often bots stall or declare wrongly;
    ``timeout_seconds``: give up waiting for hands after this long."""

    hands: int = 30
    seed: int = 7
    tables: tuple[TablePlan, ...] = DEFAULT_TABLES
    turn_seconds: int = 20
    seed_window_seconds: int = 10
    start_delay_seconds: int = 10
    grant_hundredths: int = 500_00
    mischief: float = 1.0
    timeout_seconds: float = 900.0
    #: Where each bot keeps its own record (``<account>.jsonl``, rummy_ops.bots.record); None: none.
    records_dir: Path | None = None
    #: The tables' variant and its options as OpenTable takes them (``variant``,
    #: ``variant_options``; the seconds above are set on it); None: the house variant's house
    #: rule set. The bots play it with the variant's own strategy (``rummy_rules.registry``).
    rule_set: cards_pb2.RuleSet | None = None


def table_rule_set(options: DemoOptions) -> cards_pb2.RuleSet:
    """The demo tables' options: ``options.rule_set`` (none: the house variant's) with the demo's
    seconds; every rule left out is the variant's house rule."""
    out = cards_pb2.RuleSet()
    if options.rule_set is not None:
        out.CopyFrom(options.rule_set)
    out.turn_seconds = options.turn_seconds
    out.seed_window_seconds = options.seed_window_seconds
    out.start_delay_seconds = options.start_delay_seconds
    return out


def share(total: int, parts: int) -> list[int]:
    """``total`` split into ``parts`` near-equal whole shares, the larger ones first (none for
    no parts)."""
    if parts <= 0:
        return []
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]
