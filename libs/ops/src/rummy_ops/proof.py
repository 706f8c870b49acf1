"""``rummy proof``: write a hand's proof bundle (``rummy_game.proof``), the document a player
checks in ``web/verify/index.html`` or with ``node web/verify/cli.mjs``; and the bundles of many
hands into a directory (:func:`write_proofs`: the demo's ``.local/proofs/``)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

import click

from rummy_game.proof import ProofNotReady, canonical_json, hand_proof
from rummy_ops.replay.command import load_envelopes, with_kafka_options
from rummy_ops.replay.sources import Selection, SourceError, select
from rummy_platform.envelope import Envelope

#: How to open the page on a bundle, for people.
OPEN_HINT = (
    "open web/verify/index.html in a browser (file:// works, no network) and drop a bundle on "
    "it, or run: node web/verify/cli.mjs BUNDLE.json"
)


def open_hint(bundle: Path | str = "BUNDLE.json") -> str:
    """:data:`OPEN_HINT` naming ``bundle``, the file a person checks (``rummy proof -o``'s)."""
    return OPEN_HINT.replace("BUNDLE.json", str(bundle))


def proof_text(hand_id: str, envelopes: Iterable[Envelope]) -> str:
    """The canonical JSON of ``hand_id``'s bundle. Raises SourceError (no such hand),
    ProofNotReady (not ended, aborted, seed not revealed)."""
    chosen = select(envelopes, Selection(hand_id=hand_id))
    table_id, _hand, events = chosen[0]
    return canonical_json(hand_proof(table_id, hand_id, events))


def write_proofs(envelopes: Iterable[Envelope], hand_ids: Iterable[str], directory: Path) -> int:
    """Write ``<hand id>.json`` into ``directory`` for each hand of ``hand_ids`` that has a proof
    (ended, seed revealed); returns how many were written."""
    directory.mkdir(parents=True, exist_ok=True)
    wanted = set(hand_ids)
    written = 0
    for table_id, hand_id, events in select(envelopes, Selection()):
        if hand_id not in wanted:
            continue
        try:
            text = canonical_json(hand_proof(table_id, hand_id, events))
        except ProofNotReady:
            continue
        (directory / f"{hand_id}.json").write_text(text + "\n", encoding="utf-8")
        written += 1
    return written


@click.command()
@click.option("--hand", required=True, help="The hand, by hand id.")
@with_kafka_options
@click.option(
    "--from-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Read an exported JSONL file (`rummy export`) instead of Kafka.",
)
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The bundle file to write ('-' for standard output).",
)
def proof(
    hand: str, bootstrap: str, topic_prefix: str, from_file: Path | None, output: Path
) -> None:
    """Write the proof bundle of one ended hand whose seed is revealed: canonical JSON with the
    commitment, the revealed seed, every client seed, the rule set, every event, the result and
    the settlement (schema: web/verify/proof-bundle.schema.json). Exits 1 when the hand is not
    found, has not ended, was aborted or its seed is not revealed yet."""
    if str(output) != "-" and not output.parent.is_dir():
        raise click.ClickException(f"cannot write {output}: no directory {output.parent}")
    envelopes = load_envelopes(from_file, bootstrap, topic_prefix, Selection(hand_id=hand))
    try:
        text = proof_text(hand, envelopes)
    except (SourceError, ProofNotReady, ValueError) as error:
        raise click.ClickException(str(error)) from None
    if str(output) == "-":
        sys.stdout.write(text + "\n")
        return
    output.write_text(text + "\n", encoding="utf-8")
    click.echo(
        f"wrote the proof of hand {hand} to {output}; to check it, {open_hint(output)}", err=True
    )
