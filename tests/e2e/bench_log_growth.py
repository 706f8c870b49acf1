"""How fast the never-expiring topics grow: bytes per 1,000 hands of the demo's bots.

Usage (brokers: KAFKA_BOOTSTRAP_SERVERS + DATABASE_URL when set, else the local ones, started and
then stopped if not running, as every benchmark here gets them):

    .venv/bin/python tests/e2e/bench_log_growth.py [hands]     # default 40

Starts the five services as processes (own database and topic prefix, clock 10x), lets the
demo's bots play ``hands`` hands at its three points tables (``rummy_ops.demo.play``), then
reads every committed record of the five event topics (``rummy_platform.eventlog.
export_partition``, what ``rummy backup`` copies) and prints, per topic and in all, the records,
their bytes (key + value + headers: what the broker stores of them, before its per-record and
per-batch framing) and those per 1,000 ended hands (the tables' opening and the grants
included, paid once a run). Also the size of a ``rummy backup`` archive of it.
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from rummy_ops.backup.sealed import read_key, write_new_key  # noqa: E402
from rummy_ops.backup.take import take_backup  # noqa: E402
from rummy_ops.demo import DemoOptions, play  # noqa: E402
from rummy_ops.stack import brokers  # noqa: E402
from rummy_platform.eventlog import (  # noqa: E402
    TopicPartition,
    cut_log,
    export_partition,
    partition_counts,
)
from rummy_platform.topics import EVENT_TOPICS  # noqa: E402
from rummy_testing.stacks import running_stack  # noqa: E402


def topic_bytes(bootstrap: str, prefix: str) -> tuple[Counter[str], Counter[str]]:
    """(records, bytes) per unprefixed topic name."""
    records: Counter[str] = Counter()
    size: Counter[str] = Counter()
    names = [prefix + t for t in EVENT_TOPICS]
    counts = partition_counts(bootstrap, names)
    ends = cut_log(bootstrap, [TopicPartition(n, p) for n, c in counts.items() for p in range(c)])
    for tp, end in ends.ends.items():
        short = tp.topic[len(prefix) :]
        for r in export_partition(bootstrap, tp, end):
            records[short] += 1
            size[short] += (
                len(r.key or b"") + len(r.value or b"") + sum(len(k) + len(v) for k, v in r.headers)
            )
    return records, size


def main() -> None:
    hands = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    with brokers() as (kafka, database), running_stack(kafka, database, "growth") as running:
        report = play(
            running.endpoints,
            DemoOptions(hands=hands, seed=3, timeout_seconds=1800),
            echo=lambda _l: None,
            progress=False,
        )
        ended = len(report.ended)
        records, size = topic_bytes(kafka, running.topic_prefix)
        with tempfile.TemporaryDirectory() as tmp:
            key_path = Path(tmp) / "key"
            write_new_key(key_path)
            summary = take_backup(
                kafka,
                running.database_url,
                running.topic_prefix,
                Path(tmp) / "archive",
                read_key(key_path),
            )
    print(f"{ended} hands ended ({report.wall_seconds:.0f} s)")
    print(f"{'topic':<18}{'records':>9}{'bytes':>12}{'bytes/1,000 hands':>20}")
    for topic in EVENT_TOPICS:
        print(
            f"{topic:<18}{records[topic]:>9,}{size[topic]:>12,}"
            f"{size[topic] / max(ended, 1) * 1000:>20,.0f}"
        )
    total = sum(size.values())
    print(
        f"{'all five':<18}{sum(records.values()):>9,}{total:>12,}"
        f"{total / max(ended, 1) * 1000:>20,.0f}"
    )
    print(
        f"rummy backup archive: {summary.archive_bytes:,} bytes "
        f"({summary.archive_bytes / max(ended, 1) * 1000:,.0f} per 1,000 hands, gzip'd and sealed)"
    )


if __name__ == "__main__":
    main()
