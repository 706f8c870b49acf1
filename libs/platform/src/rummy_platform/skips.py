"""Events a consumer skips because a newer writer made them (rolling deploys).

During a rolling deploy an older consumer meets events it was not built for: an envelope whose
payload type its :class:`~rummy_platform.envelope.PayloadRegistry` does not know
(``reason="unknown_type"``), or a hand of a variant absent from its ``rummy_rules.registry``
(``reason="unknown_variant"``). It skips such an event instead of failing or stopping: the event
counts as consumed (the offsets move past it with the next event handled) and nothing is done
for it. Each skip is counted in ``rummy_events_skipped_total{reason, type, variant}`` and logged
(structlog JSON, at warning, with ``table_id`` / ``hand_id``) the first time this process skips
that type (or variant) for that reason, not for every event.

Label values come from the wire, so they are bounded: a name is used as a label only when it
looks like a protobuf full name or a variant name (letters, digits, ``.``, ``_``, ``-``; at most
:data:`MAX_NAME_CHARS` characters) and fewer than :data:`MAX_NAMES` distinct names were seen for
its label in this process; any other is counted as ``"other"``. So the counter has at most
2 x (MAX_NAMES + 1) series whatever a writer sends.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Literal, TypedDict, TypeVar, Unpack

from prometheus_client import REGISTRY, CollectorRegistry, Counter

from rummy_platform.logging import get_logger

_log = get_logger(__name__)

Reason = Literal["unknown_type", "unknown_variant"]
_Variant = TypeVar("_Variant")

#: The most distinct type (or variant) names one process uses as label values.
MAX_NAMES = 32
#: The longest name used as a label value.
MAX_NAME_CHARS = 128
#: The label value of a name past the bounds.
OTHER = "other"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class RecordPlace(TypedDict, total=False):
    """Where a skipped event was read, for its log line: a record's ``topic``, ``partition``
    and ``offset``, or an export file's ``line`` (``path:number``)."""

    topic: str
    partition: int
    offset: int
    line: str


class SkippedEvents:
    """The counter and the log-once memory of one process (see the module docstring).
    Thread-safe."""

    def __init__(self, registry: CollectorRegistry = REGISTRY) -> None:
        self.counter = Counter(
            "rummy_events_skipped",  # exposed as rummy_events_skipped_total
            "Events skipped because this build does not know their payload type or the variant "
            "of their hand (a newer writer's, in a rolling deploy); consumed, nothing done.",
            ["reason", "type", "variant"],
            registry=registry,
        )
        self._registry = registry
        self._lock = threading.Lock()
        self._labels: dict[str, set[str]] = {"type": set(), "variant": set()}
        self._logged: set[tuple[str, str, str]] = set()

    def _label(self, kind: str, name: str) -> str:
        if not name:
            return ""
        if len(name) > MAX_NAME_CHARS or _NAME.fullmatch(name) is None:
            return OTHER
        seen = self._labels[kind]
        if name in seen:
            return name
        if len(seen) >= MAX_NAMES:
            return OTHER
        seen.add(name)
        return name

    def skipped(
        self,
        reason: Reason,
        *,
        type_name: str,
        variant: str = "",
        table_id: str = "",
        hand_id: str = "",
        consumer: str = "",
        log: bool = True,
        **where: Unpack[RecordPlace],
    ) -> bool:
        """Count one skipped event of payload type ``type_name`` (for ``unknown_variant``, the
        known type naming the unknown ``variant``), and log it if this process has not logged
        that name for that reason yet. ``consumer`` names who skipped it (``dealer``,
        ``table-inputs``, ``replay``, ...); ``where`` adds fields to the log line (topic,
        partition, offset). ``log=False``: count only (a command-line reader whose report says
        what it skipped, and whose standard output is its report). Returns True when the line
        was logged."""
        with self._lock:
            type_label = self._label("type", type_name)
            variant_label = self._label("variant", variant)
            key = (reason, type_label, variant_label)
            first = log and key not in self._logged
            if first:
                self._logged.add(key)
        self.counter.labels(reason, type_label, variant_label).inc()
        if first:
            what = (
                f"unknown event type {type_name!r}"
                if reason == "unknown_type"
                else f"a hand of unknown variant {variant!r} ({type_name})"
            )
            _log.warning(
                f"event skipped: {what}; logged once per process, counted in "
                "rummy_events_skipped_total",
                reason=reason,
                type=type_name,
                variant=variant or None,
                table_id=table_id or None,
                hand_id=hand_id or None,
                consumer=consumer or None,
                **where,
            )
        return first

    def lookup_or_skip(
        self,
        lookup: Callable[[str], _Variant],
        variant: str,
        *,
        type_name: str,
        table_id: str = "",
        hand_id: str = "",
        consumer: str = "",
        log: bool = True,
    ) -> _Variant | None:
        """``lookup(variant)`` (a variant registry's, e.g. ``rummy_rules.registry.lookup``), or
        None when it raises LookupError (this build does not know the variant): the event of
        payload type ``type_name`` naming it is then counted, and logged once, as an
        ``unknown_variant`` skip (arguments as for :meth:`skipped`)."""
        try:
            return lookup(variant)
        except LookupError:
            self.skipped(
                "unknown_variant",
                type_name=type_name,
                variant=variant,
                table_id=table_id,
                hand_id=hand_id,
                consumer=consumer,
                log=log,
            )
            return None

    def totals(self) -> dict[tuple[str, str, str], int]:
        """Every ``(reason, type, variant)`` label set skipped so far -> how many (a reader
        compares two of these to say what one read skipped)."""
        out: dict[tuple[str, str, str], int] = {}
        for metric in self.counter.collect():
            for sample in metric.samples:
                if sample.name.endswith("_total"):
                    labels = sample.labels
                    key = (labels["reason"], labels["type"], labels["variant"])
                    out[key] = int(sample.value)
        return out

    def count(self, reason: Reason, type_name: str, variant: str = "") -> float:
        """How many events of these labels this process skipped (0 when none)."""
        value = self._registry.get_sample_value(
            "rummy_events_skipped_total",
            {"reason": reason, "type": type_name, "variant": variant},
        )
        return value or 0.0


#: The process's skips (every consumer of the process counts here).
SKIPPED = SkippedEvents()
