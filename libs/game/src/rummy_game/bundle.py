"""A variant as one plug-in: :class:`VariantBundle`, everything a host needs of one game, installed
by one call (:meth:`VariantBundle.install`).

A package that ships a variant builds one bundle and declares it in the entry-point group
``rummy.variants`` of its ``pyproject.toml``::

    [project.entry-points."rummy.variants"]
    gin-rummy = "acme_gin.bundle:GIN_BUNDLE"

Every host finds it by itself (``rummy_rules.registry.discover``, on the first lookup of a
variant, a wire, an event payload or a codec class), so installing the package adds the game with
no edit to this tree; the product's Indian points is found that way
(``rummy_game.indian:INDIAN_BUNDLE``, declared by ``rummy-game``). A module that is not installed
(a test suite's toy, named by ``RUMMY_VARIANT_PLUGINS``) calls its bundle's ``install()`` when it
is imported.

What a bundle holds (the variant's own code, in its own packages):

- ``variant``: its rules behind ``rummy_rules.variant.Variant`` (state machine, views, rule sets,
  its bot strategy as ``variant.bot``, its ``legal_commands``);
- ``wire``: its ``rummy_game.variant_wire.VariantWire`` (options, events, commands and answers on
  the wire);
- ``payload_modules``: its generated ``*_pb2`` modules of event payloads (every stream reader
  decodes them), and ``payload_aliases``: old type names its events were recorded under;
- ``codec_classes``: its dataclass messages for ``rummy_rules.json_form`` (commands, events,
options,
  state);
- ``verifier_script``: the browser verifier's scorer of its hands (a file of ``web/verify``), or
  None; ``docs``: its rules documents (paths from the repository root);
- what hosts show and count of its hands, which they know no other way: ``outcomes`` (each
  seat's ``SeatResult.outcome`` word with its label and mark: the table's
  ``rummy_table_seat_outcomes_total``, the demo's report) and ``counters`` (the table's series of
  its own events, ``VariantWire.metric``: ``rummy_table_declares_total{result}``), and for
  replay ``equivalent_results`` (a recorded grouping equally good as today's solver's), and for
  ``rummy watch`` ``view_lines`` (its own public part of a view, ``PlayerView.variant_view``, in
  short lines for people: :func:`variant_view_lines`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from google.protobuf import any_pb2

from rummy.match.v1 import match_pb2 as match_pb
from rummy_platform import limits, variant_payloads
from rummy_rules import cases, json_form, registry
from rummy_rules.cases import CaseGames
from rummy_rules.events import HandEnded
from rummy_rules.variant import Variant

from . import variant_wires
from .variant_wire import VariantWire

#: ``(state, recorded HandEnded, derived HandEnded) -> (equivalent seats, why not)``.
EquivalentResults = Callable[[object, HandEnded, HandEnded], tuple[list[int], str]]
#: ``PlayerView.variant_view`` (packed) -> its lines for people (``[]``: nothing to show).
ViewLines = Callable[[any_pb2.Any], list[str]]


@dataclass(frozen=True)
class Outcome:
    """How a seat's part of a hand ended, as the variant's ``SeatResult.outcome`` names it:
    ``name`` (``"wrong_declare"``), ``label`` (a phrase for people: ``"wrong declare"``),
    ``short`` (a mark of at most 3 characters for one-line summaries: ``"wd"``; ``""``: none);
    ``notable``: the demo's report lists the hands it ended (a wrong declare, a timeout)."""

    name: str
    label: str
    short: str = ""
    notable: bool = False


@dataclass(frozen=True)
class CounterSeries:
    """A Prometheus counter the table keeps of the variant's own events (the pairs its wire's
    ``metric`` gives): ``rummy_table_<name>_total`` with one label ``label`` whose values are
    ``values`` (every one exported at 0 from the start); ``help`` its description."""

    name: str
    help: str
    label: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class DemoTable:
    """A table ``rummy demo`` opens for the variant: ``seats``, ``point_value_hundredths`` per
    point (0: free or a format table), ``commission_bps``, ``players`` bots (None: every seat),
    ``match`` its format (``OpenTableRequest.match``; None: a points table) and
    ``split_at_seats`` (at a pool with split, its bots ask once this many seats are in) and
    ``variant_options`` the variant's own options, packed as ``RuleSet.variant_options.
    other_variant`` takes them (None: the variant's house rules; e.g. a packed
    ``rummy.gin.v1.GinOptions`` with ``oklahoma``)."""

    name: str
    seats: int
    point_value_hundredths: int
    commission_bps: int
    players: int | None = None
    match: match_pb.MatchOptions | None = field(default=None, compare=False)
    split_at_seats: int = 0
    variant_options: any_pb2.Any | None = field(default=None, compare=False)


@dataclass(frozen=True)
class DemoGame:
    """A game of ``rummy demo --game NAME``: the tables it opens, all of the variant."""

    name: str
    tables: tuple[DemoTable, ...]


@dataclass(frozen=True)
class VariantBundle:
    """One variant's plug-in (see the module's text)."""

    variant: Variant[Any]
    wire: VariantWire
    payload_modules: tuple[ModuleType, ...] = ()
    #: (old full type name, the full name of the message it is read as), e.g.
    #: ``("rummy.table.v1.Declared", "rummy.indian.v1.Declared")``.
    payload_aliases: tuple[tuple[str, str], ...] = ()
    codec_classes: tuple[type, ...] = ()
    verifier_script: str | None = None
    docs: tuple[str, ...] = ()
    outcomes: tuple[Outcome, ...] = ()
    counters: tuple[CounterSeries, ...] = ()
    #: For replay: given the hand's state before a recorded HandEnded that differs from the
    #: re-derived one, the seats whose recorded arrangement is an equally good alternative
    #: (``([], why)`` when it is not; ``why`` ``""`` for a difference elsewhere); None: a
    #: difference is always a finding.
    equivalent_results: EquivalentResults | None = None
    #: The limits of the variant's own request fields (its commands', its older RPCs'), by
    #: field name: bytes for strings and bytes, items for repeated fields
    #: (``rummy_platform.limits``, this variant's alone: another may limit a field of the same
    #: name differently; the field's ``.proto`` comment states the same number).
    field_limits: tuple[tuple[str, int], ...] = ()
    #: The rules cases it judges for ``rummy-rules evaluate`` (``rummy_rules.cases``), or None.
    cli_cases: CaseGames | None = None
    #: The games ``rummy demo --game`` plays of it (its match formats' tables).
    demo_games: tuple[DemoGame, ...] = ()
    #: What a watcher reads of its own public part of a spectator's view (``rummy watch``): the
    #: packed ``PlayerView.variant_view`` -> short lines (cards by face; never a card the view
    #: holds back, and no hand's cards even once the result shows them: the result's lines are
    #: the host's); None: the variant puts nothing of its own on the view.
    view_lines: ViewLines | None = None

    def __post_init__(self) -> None:
        if self.wire.variant != self.variant.name:
            raise ValueError(
                f"the wire of {self.wire.variant!r} is not the variant {self.variant.name!r}'s"
            )

    @property
    def name(self) -> str:
        """The variant's name (``RuleSet.variant``)."""
        return self.variant.name

    def install(self) -> None:
        """Make the variant playable by every host in this process: its rules
        (``rummy_rules.registry``), its wire (``rummy_game.variant_wires``), its event payloads and
        their old names (``rummy_platform.variant_payloads``) and its codec classes
        (``rummy_rules.json_form``). Installing twice is harmless; raises ValueError if another
        variant holds its name."""
        registry.register(self.variant)
        variant_wires.register(self.wire)
        _BUNDLES[self.name] = self
        for module in self.payload_modules:
            variant_payloads.register_module(module)
        variant_payloads.register_aliases(dict(self.payload_aliases))
        limits.register_field_limits(self.name, dict(self.field_limits))
        json_form.register(*self.codec_classes)
        if self.cli_cases is not None:
            cases.register(self.cli_cases)


_BUNDLES: dict[str, VariantBundle] = {}


def bundles() -> Iterator[VariantBundle]:
    """Every installed bundle (the entry points discovered first), by variant name."""
    registry.discover()
    return iter([_BUNDLES[name] for name in sorted(_BUNDLES)])


def bundle_of(variant: str) -> VariantBundle | None:
    """The installed bundle of the variant named ``variant``, or None (for ``""`` too: no
    variant's name)."""
    registry.discover()
    return _BUNDLES.get(variant)


def variant_view_lines(variant: str, packed: any_pb2.Any) -> list[str]:
    """The lines ``variant``'s bundle shows of ``packed``, a view's ``variant_view``; ``[]``
    when the view carries none, the bundle is not installed or shows nothing of its own."""
    bundle = bundle_of(variant)
    if bundle is None or bundle.view_lines is None or not packed.type_url:
        return []
    return bundle.view_lines(packed)


def outcome(name: str, variant: str | None = None) -> Outcome | None:
    """The outcome ``name`` as ``variant``'s bundle describes it (None if that bundle is not
    installed or does not declare it); ``variant`` None: as the first installed bundle that
    declares it describes it."""
    if variant is not None:
        bundle = bundle_of(variant)
        found = bundle.outcomes if bundle is not None else ()
        return next((o for o in found if o.name == name), None)
    return next((o for b in bundles() for o in b.outcomes if o.name == name), None)
