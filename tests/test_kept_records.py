"""Records kept from before a change (tests/data/kept/, written by an older commit: its README)
still decode, replay and verify: proof bundles of an Indian points hand, a deal of an Indian deals
match and a gin hand; the table stream of both tables as ``rummy export`` wrote it; table
snapshots; the rules codec's JSON of a match's format events and of a gin hand's state (and the
Indian bundles rewritten in each old shape the verifier upcasts, under node)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from rummy_ops.cli import main
from rummy_ops.replay.jsonl import read_jsonl
from rummy_platform.eventlog import partition_for
from rummy_platform.topics import TABLE_EVENTS
from rummy_rules import json_form, registry
from rummy_rules.events import HandDealt, HandEnded, HandStarted, SeedCommitted, SeedsLocked
from rummy_rules.shuffle import ShuffleInputs, commitment, deal
from rummy_table.adapters import snapshot
from rummy_table.application.projection import Projection
from rummy_testing.old_shapes import INDIAN_BUNDLE_SHAPES
from rummy_testing.tools import required_executable

ROOT = Path(__file__).resolve().parents[1]
KEPT = ROOT / "tests" / "data" / "kept"
BUNDLES = sorted(KEPT.glob("*.bundle.json"))
EXPORTS = sorted(KEPT.glob("*.export.jsonl"))
#: each snapshot with the export of the same table's stream, up to the snapshot's point
SNAPSHOTS = [
    ("table.snapshot.json", "indian-points.export.jsonl"),
    ("deals.snapshot.json", "indian-deals.export.jsonl"),
]
PARTITIONS = 2  # the topics the records were written to (generate.py)


def load(name: str) -> Any:
    return json.loads((KEPT / name).read_text(encoding="utf-8"))


def test_every_family_has_a_kept_bundle() -> None:
    assert {json.loads(p.read_text())["variant"] for p in BUNDLES} == {
        "indian-points",
        "gin",
    }
    assert len(BUNDLES) == 3 and len(EXPORTS) == 2


@pytest.mark.parametrize("path", BUNDLES, ids=[p.name for p in BUNDLES])
def test_a_kept_bundle_decodes_folds_to_its_end_and_its_deal_follows_from_its_seeds(
    path: Path,
) -> None:
    bundle = json.loads(path.read_text(encoding="utf-8"))
    events = [json_form.from_dict(e["event"]) for e in bundle["events"]]
    versions = [e["stream_version"] for e in bundle["events"]]
    assert versions == sorted(versions)
    variant = registry.lookup(bundle["variant"])
    state = variant.initial_state()
    for event in events:
        state = variant.apply(state, event)
    assert variant.is_over(state)
    (started,) = [e for e in events if isinstance(e, HandStarted)]
    (committed,) = [e for e in events if isinstance(e, SeedCommitted)]
    (locked,) = [e for e in events if isinstance(e, SeedsLocked)]
    (dealt,) = [e for e in events if isinstance(e, HandDealt)]
    (ended,) = [e for e in events if isinstance(e, HandEnded)]
    seed = bytes.fromhex(bundle["server_seed_hex"])
    assert commitment(seed) == committed.commitment == locked.commitment
    layout = variant.deal_layout(started.rule_set)
    inputs = ShuffleInputs(
        seed,
        bundle["hand_id"],
        tuple((s.seat, bytes.fromhex(s.seed_hex)) for s in locked.client_seeds),
    )
    seats = [s.seat for s in started.seats]
    redealt = deal(inputs, layout.shoe, seats, started.dealer_seat, layout.hand_size, layout.shape)

    def by_seat(hands: Any) -> dict[int, tuple[Any, ...]]:
        return {h.seat: tuple(h.cards) for h in hands}

    assert by_seat(redealt.hands) == by_seat(dealt.hands) and redealt.stock == dealt.stock
    assert (redealt.wild_cut, redealt.first_open) == (dealt.wild_cut, dealt.first_open)
    # the settlement sums to zero with the commission, as recorded
    assert (
        sum(ln.amount_hundredths for ln in ended.settlement.lines)
        + ended.settlement.commission_hundredths
        == 0
    )
    # re-encoded, each event is the current shape, and decodes to itself
    for event in events:
        assert json_form.from_dict(json_form.to_dict(event)) == event


@pytest.mark.parametrize("path", EXPORTS, ids=[p.name for p in EXPORTS])
def test_a_kept_export_replays_clean(path: Path) -> None:
    result = CliRunner().invoke(main, ["replay", "--from-file", str(path), "--all", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["ok"] and report["hands"], report


@pytest.mark.parametrize(("name", "export"), SNAPSHOTS, ids=[s[0] for s in SNAPSHOTS])
def test_a_kept_snapshot_decodes_to_the_table_its_stream_folds_to(name: str, export: str) -> None:
    envelopes = list(read_jsonl(KEPT / export))
    table_id = envelopes[0].stream_id
    partition = partition_for(table_id, PARTITIONS)
    data = (KEPT / name).read_bytes()
    kept = snapshot.decode(data, TABLE_EVENTS, partition)
    ((table, _covered),) = kept.tables
    folded = Projection()
    for offset, envelope in enumerate(envelopes):
        folded.apply(envelope, partition, offset)
    assert snapshot.encode_table(table) == snapshot.encode_table(folded.tables[table_id])


@pytest.mark.parametrize("name", ["deals-match.events.json", "gin.state.json"])
def test_kept_codec_records_decode_and_re_encode_to_what_decodes_the_same(name: str) -> None:
    records = load(name)
    for record in records if isinstance(records, list) else [records]:
        decoded = json_form.from_dict(record)
        assert json_form.from_dict(json_form.to_dict(decoded)) == decoded


#: each kept bundle as kept (``""``), and each Indian one rewritten in each old shape the
#: verifier upcasts (``rummy_testing.old_shapes``: rows of docs/rules/event-tags.md#deprecated)
AS_KEPT_AND_OLD = [(p, "") for p in BUNDLES] + [
    (p, row) for p in BUNDLES if p.name.startswith("indian-") for row in INDIAN_BUNDLE_SHAPES
]


@pytest.mark.integration
@pytest.mark.parametrize(
    ("path", "old_shape"),
    AS_KEPT_AND_OLD,
    ids=[p.name + (f" ({row})" if row else "") for p, row in AS_KEPT_AND_OLD],
)
def test_the_browser_verifier_verifies_a_kept_bundle_under_node(
    path: Path, old_shape: str, tmp_path: Path
) -> None:
    import subprocess

    node = required_executable("node", "bash deploy/local/node.sh install")
    if old_shape:
        old = INDIAN_BUNDLE_SHAPES[old_shape](json.loads(path.read_text(encoding="utf-8")))
        path = tmp_path / path.name
        path.write_text(json.dumps(old), encoding="utf-8")
    done = subprocess.run(
        [node, str(ROOT / "web/verify/cli.mjs"), str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["ok"] and result["verdict"] == "passed", result
