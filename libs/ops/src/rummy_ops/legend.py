"""Every abbreviation a command prints, explained at the end of its ``--help``: a click command
class (:class:`LegendCommand`) whose help ends with a legend made when the help is shown, so
that the marks of every installed variant (``rummy_game.bundle.Outcome.short``: ``W``, ``fd``,
``wd`` ...; loaded plug-ins included) are listed from the variants themselves, never from a
list here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click

from rummy_game.bundle import bundles

#: A legend: ``(term, what it means)`` rows.
Legend = Sequence[tuple[str, str]]


class LegendCommand(click.Command):
    """A click command whose ``--help`` ends with a section "In its output" of ``legend()``'s
    rows; pass ``legend=`` (a function, called only when help is shown)."""

    def __init__(self, *args: Any, legend: Callable[[], Legend], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.legend = legend

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        with formatter.section("In its output"):
            formatter.write_dl(list(self.legend()))


def outcome_marks() -> list[tuple[str, str]]:
    """``(mark, "label, in variant, variant")`` for every seat-outcome mark the installed variants
    declare, a mark declared alike by several variants once, with each of them named."""
    meaning: dict[str, dict[str, list[str]]] = {}
    for bundle in bundles():
        for outcome in bundle.outcomes:
            if outcome.short:
                labels = meaning.setdefault(outcome.short, {})
                labels.setdefault(outcome.label, []).append(bundle.variant.name)
    return [
        (mark, "; ".join(f"{label}, in {', '.join(names)}" for label, names in labels.items()))
        for mark, labels in meaning.items()
    ]


def demo_legend() -> list[tuple[str, str]]:
    """What ``rummy demo``'s hand and match lines abbreviate."""
    return [
        ("sN", "seat N"),
        (
            "sN:P<mark>",
            "in points [...]: seat N's points P (in scores [...]: its signed score) and, after "
            "them, how its hand ended (no mark: it counted its cards):",
        ),
        *[(f"  {mark}", meaning) for mark, meaning in outcome_marks()],
        ("net [sN:+T]", "each seat's net House Tokens for the hand or match (+ won, - lost)"),
        ("released [sN:T]", "an aborted match: the House Tokens each seat's hold gave back"),
        ("totals/chips [sN:Px]", "x: eliminated from the match; lv: left it"),
        ("pts", "points (a score sheet's hand points)"),
        ("commission, pool, prize", "in House Tokens (13.00 = thirteen tokens)"),
    ]


def replay_legend() -> list[tuple[str, str]]:
    """What ``rummy replay``'s timeline abbreviates."""
    return [
        (
            "columns",
            "! (the event a check failed at), stream version, time (UTC, ms), event type, seat, "
            "what the event says",
        ),
        ("sN", "seat N; sN=ACCOUNT: the account seated there"),
        (
            "amounts",
            "in House Tokens, two decimals (StakesReserved s0 13.00: thirteen tokens held for "
            "seat 0; HandEnded [s0:+7.20 ...]: each seat's net, + won, - lost); --json keeps "
            "integer hundredths of a token (1300 = 13.00)",
        ),
        (
            "commission N.NN%",
            "the table's commission: a percent of what the losers pay (a match: of its pool)",
        ),
        ("cut / open / stock N", "the wild-card cut, the first open card, N cards in the stock"),
        ("(auto)", "a move the table made for a seat whose turn timed out"),
        ("sN:P outcome", "in HandEnded: seat N's points P and how its hand ended (the words)"),
        ("sN:Ppt/+T", "a settlement in a mismatch line: seat N's points P and net T tokens"),
        ("...", "a commitment or seed shown by its first 16 hex digits"),
    ]
