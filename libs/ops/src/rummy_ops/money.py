"""Money as a person reads it: hundredths of a House Token as tokens with two decimals
(:func:`tokens`: ``13.00``), a commission's basis points as a percent (:func:`commission_text`),
a wire field of either as a person reads it (:func:`money_field`),
and what a table plays for, read from its format (:func:`stakes_of`: the money fields the format
declares; nothing here knows one game). The demo's lines, ``rummy tables`` and the reports print
money through here; ``--json`` keeps integer hundredths."""

from __future__ import annotations

from dataclasses import dataclass

from rummy.match.v1 import match_pb2 as mpb
from rummy_game import match_payloads


def tokens(hundredths: int, signed: bool = False) -> str:
    """Hundredths of a House Token as tokens with two decimals (``-12.05``, ``+3.40``)."""
    sign = "-" if hundredths < 0 else ("+" if signed else "")
    whole, cents = divmod(abs(hundredths), 100)
    return f"{sign}{whole}.{cents:02d}"


def commission_text(bps: int) -> str:
    """Basis points as a percent with two decimals (``500`` -> ``5.00%``)."""
    whole, part = divmod(bps, 100)
    return f"{whole}.{part:02d}%"


def money_field(name: str, value: object) -> tuple[str, str]:
    """A wire field as a person reads it: ``("stake_hundredths", 1300)`` -> ``("stake",
    "13.00")`` (House Tokens), ``("commission_bps", 500)`` -> ``("commission", "5.00%")``;
    any other field as it is (``str(value)``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if name.endswith("_hundredths"):
            return name.removesuffix("_hundredths"), tokens(value)
        if name.endswith("_bps"):
            return name.removesuffix("_bps"), commission_text(value)
    return name, str(value)


@dataclass(frozen=True)
class Stakes:
    """What a table plays for, as its format says: ``format_name`` (``single``, ``pool-101``,
    ``game-to-100``, ...), ``point_value_hundredths`` (hundredths of a House Token a point: a
    points table's, or a game format's a game point; None when the format has none) and
    ``entry_fee_hundredths`` (hundredths a seat; None when the format takes no entry)."""

    format_name: str
    point_value_hundredths: int | None
    entry_fee_hundredths: int | None

    @property
    def is_match(self) -> bool:
        """True for a format other than ``single`` (a match table)."""
        return self.format_name != "single"

    def text(self) -> str:
        """``point 0.10``, ``entry 10.00`` (both, comma-separated, for a format with both;
        ``-`` for one with neither), in House Tokens."""
        parts = []
        if self.point_value_hundredths is not None:
            parts.append(f"point {tokens(self.point_value_hundredths)}")
        if self.entry_fee_hundredths is not None:
            parts.append(f"entry {tokens(self.entry_fee_hundredths)}")
        return ", ".join(parts) or "-"


def stakes_of(
    match: mpb.MatchOptions | None, commission_bps: int, point_value_hundredths: int
) -> Stakes:
    """The stakes of a table opened with ``match`` (None or ``single``: a points table of
    ``point_value_hundredths`` a point), read from its format (the money fields it declares).
    Raises rummy_rules.rules.RuleSetError for options out of the format's bounds."""
    fmt = match_payloads.format_from_pb(match, commission_bps)
    if not match_payloads.is_match(match):
        return Stakes(fmt.name, point_value_hundredths, None)
    point: int | None = getattr(fmt, "point_value_hundredths", None)
    entry: int | None = getattr(fmt, "entry_hundredths", None)
    return Stakes(fmt.name, point, entry)
