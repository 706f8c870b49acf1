"""configure_logging may be called more than once in a process (every ServiceHost and the variant
plug-in loader call it): each call replaces the level and the stream, and a logger used before a
later call still writes through the current configuration, so structlog's ``capture_logs`` sees
its lines (it changes the configured processors in place)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest
from structlog.testing import capture_logs

from rummy_platform.logging import configure_logging, get_logger


@pytest.fixture(autouse=True)
def stderr_logging_after() -> Iterator[None]:
    yield
    configure_logging()  # as a service host leaves it: JSON lines on stderr at info


def test_a_logger_used_before_logging_is_configured_again_is_seen_by_a_capture() -> None:
    log = get_logger("rummy_platform.tests.capture_after_reconfiguring")
    configure_logging("info", stream=io.StringIO())
    log.info("under the first configuration")  # the logger is cached on this first use
    configure_logging("info", stream=io.StringIO())
    with capture_logs() as logs:
        log.warning("under a capture")
    assert [(line["log_level"], line["event"]) for line in logs] == [("warning", "under a capture")]


def test_configuring_again_replaces_the_stream_and_the_level() -> None:
    log = get_logger("rummy_platform.tests.reconfigured_stream")
    first, second = io.StringIO(), io.StringIO()
    configure_logging("info", stream=first)
    log.info("one")
    configure_logging("warning", stream=second)
    log.info("two, below the level")
    log.warning("three")
    assert [json.loads(line)["event"] for line in first.getvalue().splitlines()] == ["one"]
    (line,) = [json.loads(line) for line in second.getvalue().splitlines()]
    assert line["event"] == "three" and line["level"] == "warning"
    assert line["logger"] == "rummy_platform.tests.reconfigured_stream"


def test_configuring_during_a_capture_leaves_the_capture_going() -> None:
    log = get_logger("rummy_platform.tests.configured_during_capture")
    configure_logging("info", stream=io.StringIO())
    log.info("cached")
    with capture_logs() as logs:
        configure_logging("info", stream=io.StringIO())  # e.g. a service host started inside
        log.warning("still captured")
    assert [line["event"] for line in logs] == ["still captured"]
