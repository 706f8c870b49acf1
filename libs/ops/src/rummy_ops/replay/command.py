"""The click commands ``rummy replay`` and ``rummy export``."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import click

from rummy_ops.broker_defaults import bootstrap_option
from rummy_ops.legend import LegendCommand, replay_legend
from rummy_ops.reach import Unreachable, redact, require_kafka
from rummy_ops.replay import ReplayRun, replay_events
from rummy_ops.replay.checks import DEFAULT_SETTLE_GRACE_S
from rummy_ops.replay.jsonl import ExportFormatError, read_jsonl, write_jsonl
from rummy_ops.replay.limits import LimitRecheck, recheck_refusals, scope, selected
from rummy_ops.replay.render import hand_json, hand_lines, match_json
from rummy_ops.replay.sources import (
    Selection,
    SourceError,
    hand_id_of,
    read_kafka,
    read_topic,
    select,
)
from rummy_ops.table_names import resolve_option, table_service_options
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import EventLogError
from rummy_platform.skips import SKIPPED
from rummy_platform.topics import LEDGER_EVENTS


def _selection(
    hand: str | None,
    table: str | None,
    all_hands: bool,
    from_file: bool = False,
    table_id_of: Callable[[str], str] = lambda table: table,
) -> Selection:
    """The hands asked for: exactly one of --hand, --table, --all; none means every hand when
    reading a file (``from_file``). ``table_id_of``: the id of the table --table names (its id
    or its name)."""
    chosen = [x for x in (hand, table) if x] + (["all"] if all_hands else [])
    if len(chosen) > 1 or (not chosen and not from_file):
        raise click.UsageError("give exactly one of --hand, --table, --all")
    return Selection(hand_id=hand or "", table_id=table_id_of(table) if table else "")


def _table_lookup(address: str, token: str | None, operator: str) -> Callable[[str], str]:
    return lambda table: resolve_option(table, address, token, operator)


def load_envelopes(
    from_file: Path | None,
    bootstrap: str,
    topic_prefix: str,
    selection: Selection,
    skipped_types: dict[str, int] | None = None,
) -> list[Envelope]:
    """The envelopes of an exported file, or of the table stream in Kafka (one table's partition
    when ``selection`` names a table); events of a payload type this build does not know are
    skipped, and counted by type into ``skipped_types`` when given. Raises click errors for a
    missing source."""
    before = SKIPPED.totals()
    try:
        return _load(from_file, bootstrap, topic_prefix, selection)
    finally:
        if skipped_types is not None:
            for (reason, name, _variant), count in SKIPPED.totals().items():
                more = count - before.get((reason, name, _variant), 0)
                if reason == "unknown_type" and more:
                    skipped_types[name] = skipped_types.get(name, 0) + more


def _load(
    from_file: Path | None, bootstrap: str, topic_prefix: str, selection: Selection
) -> list[Envelope]:
    try:
        if from_file is not None:
            return list(read_jsonl(from_file))
        if not bootstrap:
            raise click.UsageError("give --bootstrap (or KAFKA_BOOTSTRAP_SERVERS) or --from-file")
        require_kafka(bootstrap)
        return read_kafka(bootstrap, topic_prefix, selection.table_id or None)
    except (SourceError, ExportFormatError) as error:
        raise click.ClickException(str(error)) from None


_selectors = [
    click.option("--hand", help="One hand, by hand id."),
    click.option(
        "--table",
        help="Every hand of one table, by table id or name (a name is looked up with the table "
        "service, --table-address).",
    ),
    click.option("--all", "all_hands", is_flag=True, help="Every hand in the log."),
    table_service_options("--table-address"),
]
_kafka_options = [
    bootstrap_option,
    click.option(
        "--topic-prefix",
        envvar="RUMMY_TOPIC_PREFIX",
        default="",
        help="Prefix of the event topics, as the services' RUMMY_TOPIC_PREFIX.",
    ),
]


def with_kafka_options(f: Callable[..., None]) -> Callable[..., None]:
    """Add ``--bootstrap`` and ``--topic-prefix`` (where the table stream is read) to a command."""
    for option in reversed(_kafka_options):
        f = option(f)
    return f


def _with_selectors(f: Callable[..., None]) -> Callable[..., None]:
    for option in reversed(_selectors):
        f = option(f)
    return with_kafka_options(f)


@click.command(cls=LegendCommand, legend=replay_legend)
@_with_selectors
@click.option(
    "--from-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Replay an exported JSONL file (`rummy export`) instead of reading Kafka; without "
    "--hand/--table/--all, every hand in the file.",
)
@click.option(
    "--database-url",
    help="The ledger's PostgreSQL, to check each settlement against its journal rows. "
    "Defaults to DATABASE_URL when reading Kafka; a file replay skips the check without it.",
)
@click.option(
    "--settle-grace",
    type=click.FloatRange(min=0),
    default=DEFAULT_SETTLE_GRACE_S,
    show_default=True,
    help="Seconds after a hand ended within which a journal without its settlement is only a "
    "note; after them it is a failure (checked with --database-url).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON document instead of a timeline.")
@click.option("--quiet", is_flag=True, help="Verdicts only, no timeline.")
def replay(
    hand: str | None,
    table: str | None,
    all_hands: bool,
    address: str,
    token: str | None,
    operator: str,
    bootstrap: str,
    topic_prefix: str,
    from_file: Path | None,
    database_url: str | None,
    settle_grace: float,
    as_json: bool,
    quiet: bool,
) -> None:
    """Rebuild hands from the table stream through the rules library and check them: the seed
    against its commitment, the deal and reshuffles recomputed from the seeds, every event
    against what the rules derive, the settlement against HandEnded and the ledger's journal.
    Exits 1 on any mismatch, naming the first event where replay and record differ, on a
    settlement the ledger refused (the hand void), on an ended hand with no settlement in the
    journal after --settle-grace seconds, and when no hand is found. With --from-file and no
    --hand/--table/--all, every hand in the file. Reading Kafka, every seat a player's own
    limits held back ("not dealt in") is re-checked against the limits in force then, from the
    ledger's topic (rummy_ops.replay.limits), and those at the selection reported (--hand: that
    hand's; --table: that table's; --all: every table's); a refusal they contradict exits 1 too."""
    selection = _selection(
        hand, table, all_hands, from_file is not None, _table_lookup(address, token, operator)
    )
    skipped: dict[str, int] = {}
    envelopes = load_envelopes(from_file, bootstrap, topic_prefix, selection, skipped)
    if database_url is None and from_file is None:
        database_url = os.environ.get("DATABASE_URL") or None
    reader = None
    if database_url:
        from rummy_ops.replay.ledger import JournalReader

        try:
            reader = JournalReader(database_url)
        except Unreachable:
            raise
        except Exception as error:  # psycopg.Error: reached, but refused
            where = redact(database_url)
            message = f"cannot read the ledger database at {where}: {error}"
            raise click.ClickException(message) from None
    try:
        run = replay_events(envelopes, selection, reader, settle_grace)
    except SourceError as error:
        raise click.ClickException(str(error)) from None
    finally:
        if reader is not None:
            reader.close()
    run.skipped_types = skipped
    if not run.hands:
        where = str(from_file) if from_file is not None else "the table stream"
        for line in _skipped_lines(run):
            click.echo(line, err=True)
        raise click.ClickException(f"no hands found in {where}")
    rechecks: list[LimitRecheck] = []
    if from_file is None:
        try:
            ledger = read_topic(bootstrap, topic_prefix + LEDGER_EVENTS)
        except (SourceError, EventLogError):  # no ledger topic here: nothing to re-check
            ledger = []
        rechecks = selected(recheck_refusals(envelopes, ledger), selection)
    _report(run, as_json, quiet, rechecks, scope(selection))
    if not run.ok or any(c.problem for c in rechecks):
        sys.exit(1)


def _report(
    run: ReplayRun, as_json: bool, quiet: bool, rechecks: list[LimitRecheck], where: str
) -> None:
    first = run.first
    if as_json:
        doc = {
            "ok": run.ok,
            "hands": [hand_json(h) for h in run.hands],
            "matches": [match_json(m) for m in run.matches],
            "events": run.events,
            "seconds": run.seconds,
            "events_per_second": run.events_per_second,
            "skipped_unknown_types": run.skipped_types,
            "unverifiable": [h.hand_id for h in run.unverifiable],
            "first_mismatch": None
            if first is None
            else {"hand_id": first[0].hand_id, **hand_json(first[0])["first_mismatch"]},
            "limit_refusals": [
                {"line": c.line(), "ok": c.ok, "problem": c.problem, "note": c.note}
                for c in rechecks
            ],
        }
        click.echo(json.dumps(doc, indent=2))
        return
    for hand in run.hands:
        for line in hand_lines(hand, timeline=not quiet):
            click.echo(line)
    for match in run.matches:
        click.echo(match.line())
    for line in _skipped_lines(run):
        click.echo(line)
    bad = sum(1 for h in run.hands if h.findings)
    unverifiable = len(run.unverifiable)
    bad_matches = sum(1 for m in run.matches if not m.ok)
    verdicts = (
        ([f"MISMATCH in {bad} hand(s)"] if bad else [])
        + ([f"MISMATCH in {bad_matches} match(es)"] if bad_matches else [])
        + (
            [f"UNVERIFIABLE: {unverifiable} hand(s) of rules this build does not know"]
            if unverifiable
            else []
        )
    )
    verdict = "; ".join(verdicts) if verdicts else "OK"
    refused = sum(1 for h in run.hands if h.outcome == "voided")
    if refused:
        verdict += f", {refused} with the settlement refused by the ledger"
    click.echo(
        f"replay: {verdict}: {len(run.hands)} hands"
        + (f", {len(run.matches)} matches" if run.matches else "")
        + f", {run.events} events in "
        f"{run.seconds:.3f} s ({run.events_per_second:,.0f} events/s)"
    )
    if first is not None:
        hand, finding = first
        click.echo(f"first mismatch: hand {hand.hand_id}: {finding.line()}")
    if rechecks:
        for check in rechecks:
            if not quiet or not check.ok:
                click.echo(f"limit refusal {check.line()}")
        clean = sum(1 for c in rechecks if c.ok)
        click.echo(f"limit refusals ({where}): {len(rechecks)} re-checked, {clean} clean")


def _skipped_lines(run: ReplayRun) -> list[str]:
    return [
        f"skipped: unknown type {name} ({count} event{'s' if count != 1 else ''}; written by a "
        "newer build, not replayed)"
        for name, count in sorted(run.skipped_types.items())
    ]


@click.command()
@_with_selectors
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The JSONL file to write ('-' for standard output).",
)
def export(
    hand: str | None,
    table: str | None,
    all_hands: bool,
    address: str,
    token: str | None,
    operator: str,
    bootstrap: str,
    topic_prefix: str,
    output: Path,
) -> None:
    """Write table-stream events as JSON lines (envelope fields + payload as protobuf JSON with
    its type), for `rummy replay --from-file`. --table and --all write whole streams (seating
    included); --hand writes that hand's events. Says on stderr what it wrote: "exported 31
    events of 2 hands (1 table) to PATH"."""
    selection = _selection(
        hand, table, all_hands, table_id_of=_table_lookup(address, token, operator)
    )
    if str(output) != "-" and not output.parent.is_dir():
        raise click.ClickException(f"cannot write {output}: no directory {output.parent}")
    envelopes = load_envelopes(None, bootstrap, topic_prefix, selection)
    try:
        if selection.hand_id:
            chosen = [e for _t, _h, es in select(envelopes, selection) for e in es]
        else:
            chosen = [
                e
                for e in sorted(envelopes, key=lambda e: (e.stream_id, e.stream_version))
                if not selection.table_id or e.stream_id == selection.table_id
            ]
            if not chosen and selection.table_id:
                raise SourceError(f"no events of table {selection.table_id} in the table stream")
    except SourceError as error:
        raise click.ClickException(str(error)) from None
    if str(output) == "-":
        count, where = write_jsonl(chosen, sys.stdout), "standard output"
        sys.stdout.flush()  # the file's lines before the summary line on a shared terminal
    else:
        try:
            with open(output, "w", encoding="utf-8") as out:
                count, where = write_jsonl(chosen, out), str(output)
        except OSError as error:
            raise click.ClickException(f"cannot write {output}: {error.strerror}") from None
    click.echo(export_summary(chosen, count, where), err=True)


def export_summary(events: list[Envelope], count: int, where: str) -> str:
    """What ``rummy export`` wrote, on standard error (standard output may be the file):
    ``exported 31 events of 2 hands (1 table) to table.jsonl``."""
    hands = len({hand_id_of(e) for e in events} - {""})
    tables = len({e.stream_id for e in events})
    return (
        f"exported {count} event{'s' * (count != 1)} of {hands} hand{'s' * (hands != 1)} "
        f"({tables} table{'s' * (tables != 1)}) to {where}"
    )
