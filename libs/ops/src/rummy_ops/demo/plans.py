"""What the demo plays: the tables (:class:`TablePlan`, :data:`DEFAULT_TABLES`) and the run's
options (:class:`DemoOptions`). Money in hundredths of a House Token, times in rule-set seconds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rummy.common.v1 import cards_pb2


@dataclass(frozen=True)
class TablePlan:
    """A table to open: ``point_value_hundredths`` per point (0 = free), ``commission_bps`` on
    the winner's take (basis points); ``players`` bots are seated (default: every seat)."""

    name: str
    seats: int
    point_value_hundredths: int
    commission_bps: int
    players: int | None = None

    @property
    def bots(self) -> int:
        return self.players or self.seats


DEFAULT_TABLES: tuple[TablePlan, ...] = (
    TablePlan("free-4", 4, 0, 0, players=2),  # heads-up: a drop or a wrong declare ends it
    TablePlan("silver-6", 6, 10, 1000),
    TablePlan("gold-8", 8, 25, 500),
)


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
    """``total`` split into ``parts`` near-equal whole shares, the larger ones first."""
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]
