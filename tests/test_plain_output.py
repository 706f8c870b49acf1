"""No colour codes in what deploy/local forwards off a terminal (issue 31: Maven 3.8 wrote
``ESC[0m`` before its messages even with ``-B -Dstyle.color=never``): lib.sh's ``plain_text``
strips escape sequences, and kafka.sh's jar fetch runs Maven through it."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from rummy_testing.deploy_files import REPO_ROOT

LIB = REPO_ROOT / "deploy" / "local" / "lib.sh"
KAFKA_SH = REPO_ROOT / "deploy" / "local" / "kafka.sh"


def plain(text: str) -> str:
    run = subprocess.run(
        ["bash", "-c", f"source '{LIB}'; plain_text"],
        input=text,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return run.stdout


@pytest.mark.integration  # starts a process
def test_plain_text_strips_colours_resets_and_cursor_moves() -> None:
    coloured = "\x1b[0m\x1b[0m[\x1b[1;31mERROR\x1b[m] no POM\n\x1b[2K\x1b[?25lhands 3/30\n"
    assert plain(coloured) == "[ERROR] no POM\nhands 3/30\n"


@pytest.mark.integration  # starts a process
def test_plain_text_keeps_plain_lines_as_they_are() -> None:
    text = "kafka: 112 jars in .local/kafka/libs\n[INFO] a [bracketed] line; 10% done\n"
    assert plain(text) == text


def test_the_jar_fetch_forwards_maven_through_plain_text() -> None:
    fetch = KAFKA_SH.read_text(encoding="utf-8").split("fetch() {", 1)[1].split("\n}\n", 1)[0]
    assert "-Djansi.noreset=true" in fetch and "| plain_text" in fetch


@pytest.mark.integration  # starts a process
@pytest.mark.skipif(shutil.which("mvn") is None, reason="Maven is not installed")
def test_maven_as_kafka_sh_runs_it_prints_no_escape_sequence(tmp_path: object) -> None:
    run = subprocess.run(
        [
            "bash",
            "-c",
            f"source '{LIB}'; set -o pipefail; MAVEN_OPTS=-Djansi.noreset=true mvn -B -q "
            "-Dstyle.color=never -f /nonexistent/pom.xml validate 2>&1 | plain_text",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode != 0  # no such POM: Maven's error lines, which carried the resets
    assert "ERROR" in run.stdout and "\x1b" not in run.stdout
