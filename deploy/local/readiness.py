"""Readiness probes for the local brokers: each one is a real protocol round trip.

    python deploy/local/readiness.py kafka 127.0.0.1:19092 --timeout 60
    python deploy/local/readiness.py postgres postgresql://rummy:rummy@127.0.0.1:15432/rummy

Kafka: a metadata round trip through kafka-python's admin client (``describe_cluster``), which a
KRaft broker answers only once it is registered and unfenced. PostgreSQL: ``SELECT 1`` over psycopg.
Retries until the timeout (seconds); exits 0 when the broker answered, 1 otherwise, printing the
last error.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from typing import Any


def kafka_round_trip(bootstrap_servers: str, security: dict[str, Any] | None = None) -> str:
    """Describe the cluster at ``bootstrap_servers`` (comma-separated host:port); return a summary.
    ``security``: kafka-python's security settings (a secured broker, see kafka_security.py).

    Raises whatever kafka-python raises when no broker answers (e.g. ``NoBrokersAvailable``).
    """
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(
        bootstrap_servers=bootstrap_servers.split(","),
        client_id="rummy-readiness",
        request_timeout_ms=5000,
        bootstrap_timeout_ms=3000,
        **(security or {}),
    )
    try:
        cluster = admin.describe_cluster()
    finally:
        admin.close()
    brokers = cluster.get("brokers") or []
    if not brokers:
        raise RuntimeError(f"cluster answered with no brokers: {cluster!r}")
    return f"cluster {cluster.get('cluster_id')}, {len(brokers)} broker(s)"


def postgres_round_trip(database_url: str) -> str:
    """Run ``SELECT 1`` at ``database_url``; return the server version. Raises psycopg errors."""
    import psycopg

    with psycopg.connect(database_url, connect_timeout=5) as conn:
        row = conn.execute("SELECT 1, current_setting('server_version')").fetchone()
    if row is None or row[0] != 1:
        raise RuntimeError(f"SELECT 1 returned {row!r}")
    return f"PostgreSQL {row[1]}"


PROBES: dict[str, Callable[[str], str]] = {
    "kafka": kafka_round_trip,
    "postgres": postgres_round_trip,
}


def redact(address: str) -> str:
    """``address`` with any password in a URL's user info replaced by ``***``."""
    return re.sub(r"(//[^:/@]+:)[^@]*@", r"\1***@", address)


def wait_until_ready(
    kind: str, address: str, timeout_s: float, probe: Callable[[str], str] | None = None
) -> str:
    """Retry the ``kind`` probe (or ``probe``) against ``address`` until it succeeds or
    ``timeout_s`` seconds pass.

    Returns the probe's summary; raises ``TimeoutError`` carrying the last error.
    """
    probe = probe or PROBES[kind]
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return probe(address)
        except Exception as exc:  # any failure means "not ready yet"; the last one is reported
            last = exc
        if time.monotonic() >= deadline:
            where = redact(address)
            raise TimeoutError(f"{kind} at {where} did not answer in {timeout_s:g}s: {last}")
        time.sleep(0.5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=sorted(PROBES))
    parser.add_argument("address", help="Kafka bootstrap servers, or a PostgreSQL URL")
    parser.add_argument("--timeout", type=float, default=0.0, help="seconds to keep retrying")
    args = parser.parse_args(argv)
    try:
        summary = wait_until_ready(args.kind, args.address, args.timeout)
    except TimeoutError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"{args.kind} ready at {redact(args.address)}: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
