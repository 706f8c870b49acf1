"""``rummy soak --minutes 3``: bots play on a stack of the soak's own (its own Kafka and
PostgreSQL on free ports, never the shared brokers) while each service is SIGKILLed and
restarted, Kafka is SIGSTOPped for 40 s and restarted and PostgreSQL restarted; every invariant
holds and play resumes within 10 s of each fault (issue 14)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rummy_ops.soak import FAULTS, MAX_RECOVERY_S

RUMMY = Path(sys.executable).with_name("rummy")


@pytest.mark.timeout(1500)
def test_a_three_minute_soak_injects_every_fault_and_finds_no_violation() -> None:
    env = {
        k: v for k, v in os.environ.items() if k not in ("KAFKA_BOOTSTRAP_SERVERS", "DATABASE_URL")
    }
    done = subprocess.run(
        [str(RUMMY), "soak", "--minutes", "3", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=1400,
        check=False,
    )
    assert done.stdout.strip(), done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    kinds = [f["kind"] for f in summary["faults"]]
    assert kinds == list(FAULTS), summary
    assert all(f["in_flight"] and not f["in_flight"].startswith("none") for f in summary["faults"])
    assert summary["violations"] == [], summary["violations"]
    assert summary["hands"] > 0
    assert summary["max_recovery_s"] is not None and summary["max_recovery_s"] <= MAX_RECOVERY_S
    assert done.returncode == 0, done.stderr[-3000:]
