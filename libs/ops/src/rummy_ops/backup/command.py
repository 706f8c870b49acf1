"""The click commands ``rummy backup`` and ``rummy restore`` (``docs/operations.md#backups``)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from rummy_ops.backup.layout import LayoutError
from rummy_ops.backup.restore import restore_backup
from rummy_ops.backup.sealed import SealError, read_key, write_new_key
from rummy_ops.backup.take import BackupError, take_backup
from rummy_ops.broker_defaults import bootstrap_option, database_url_option
from rummy_platform.eventlog import EventLogError

_bootstrap = bootstrap_option
_database = database_url_option
_key_file = click.option(
    "--key-file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The file holding the archive's key (made by `rummy backup --new-key FILE`).",
)
_json = click.option("--json", "as_json", is_flag=True, help="One JSON object: what was done.")


def _key(path: Path | None) -> bytes:
    if path is None:
        raise click.UsageError("give --key-file (make a key with `rummy backup --new-key FILE`)")
    try:
        return read_key(path)
    except SealError as error:
        raise click.ClickException(str(error)) from None


@click.command()
@_bootstrap
@_database
@click.option(
    "--topic-prefix",
    envvar="RUMMY_TOPIC_PREFIX",
    default="",
    help="Prefix of the event topics, as the services' RUMMY_TOPIC_PREFIX.",
)
@_key_file
@click.option(
    "--output",
    "-o",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The archive to write (replaced only once complete).",
)
@click.option(
    "--new-key",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Only write a fresh random key to this file (mode 0600; never overwritten), and stop.",
)
@_json
def backup(
    bootstrap: str,
    database_url: str,
    topic_prefix: str,
    key_file: Path | None,
    output: Path | None,
    new_key: Path | None,
    as_json: bool,
) -> None:
    """Back up the event log, the ledger's and fairness's database and fairness's seeds into
    one encrypted archive.

    The database is taken first, then the log (so every offset the database holds is in the
    archive's log), then fairness's seeds; the archive is sealed with AES-256-GCM under the key
    of --key-file: it holds unrevealed server seeds, keep it and the key apart.
    """
    if new_key is not None:
        try:
            write_new_key(new_key)
        except SealError as error:
            raise click.ClickException(str(error)) from None
        click.echo(
            f"wrote a new backup key to {new_key} (mode 0600): keep it apart from the archives"
        )
        return
    key = _key(key_file)
    if output is None:
        raise click.UsageError("give --output FILE: where to write the archive")
    try:
        summary = take_backup(
            bootstrap, database_url, topic_prefix, output, key, echo=lambda _l: None
        )
    except (BackupError, EventLogError) as error:
        raise click.ClickException(str(error)) from None
    if as_json:
        click.echo(
            json.dumps(
                {
                    "archive": str(summary.path),
                    "archive_bytes": summary.archive_bytes,
                    "records": summary.records,
                    "partitions": summary.partitions,
                    "log_bytes": summary.log_bytes,
                    "groups": summary.groups,
                    "seeds": summary.seeds,
                    "unrevealed_seeds": summary.unrevealed,
                    "cut_stable": summary.stable,
                    "schemas": list(summary.schemas),
                    "seconds": round(summary.seconds, 3),
                },
                sort_keys=True,
            )
        )
        return
    click.echo(
        f"backup {summary.path}: {summary.archive_bytes:,} bytes sealed; database schemas "
        f"{', '.join(summary.schemas)}; {summary.records:,} records of {summary.partitions} "
        f"partitions; {summary.groups} consumer groups' offsets; {summary.seeds} seeds "
        f"({summary.unrevealed} unrevealed); {summary.seconds:.1f} s"
    )
    if not summary.stable:
        click.echo(
            "note: consumer groups committed through every try at the log's cut; their offsets "
            "were read just before it (the services read those inputs again and drop them by id)"
        )


@click.command()
@click.argument("archive", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@_bootstrap
@_database
@_key_file
@click.option(
    "--replace-database",
    is_flag=True,
    help="Drop the target database's service schemas first if they exist (else refused).",
)
@_json
def restore(
    archive: Path,
    bootstrap: str,
    database_url: str,
    key_file: Path | None,
    replace_database: bool,
    as_json: bool,
) -> None:
    """Restore a `rummy backup` archive into an empty Kafka and a database, before any service
    starts.

    Every record goes back to its topic and partition with its key, headers and timestamp; the
    offsets the services stored (PostgreSQL's consumer_offsets, Kafka's consumer groups) are
    moved to where their records landed. A broker whose topics hold records, or a database
    that has the schemas (without --replace-database), is refused.
    """
    key = _key(key_file)
    try:
        summary = restore_backup(
            archive, key, bootstrap, database_url, replace_database=replace_database
        )
    except (SealError, LayoutError, BackupError, EventLogError) as error:
        raise click.ClickException(f"{archive}: {error}") from None
    if as_json:
        click.echo(json.dumps(summary.__dict__, sort_keys=True, default=str))
        return
    click.echo(
        f"restored {archive}: {summary.records:,} records into {summary.partitions} partitions; "
        f"{summary.groups} consumer groups; {summary.offsets_moved} stored offsets moved to "
        f"their records' new places; {summary.outbox_fixed} outbox rows set from the log; "
        f"{summary.seeds_added} seeds and {summary.reveals_added} reveals merged; "
        f"{summary.seconds:.1f} s"
    )
