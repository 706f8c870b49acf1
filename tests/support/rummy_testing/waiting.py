"""Polling until something a process does shows up: the one waiting loop of the test suites.

- :func:`wait_until` -> the first truthy value of ``check()``;
- :func:`wait_for_count` -> the items ``found()`` lists once there are at least ``count``.

Both raise ``AssertionError`` naming ``what`` (and the last value seen) after ``timeout_s``
seconds; ``every_s`` is the pause between polls (seconds).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def wait_until(what: str, check: Callable[[], Any], timeout_s: float, every_s: float = 0.5) -> Any:
    """Call ``check`` until it returns something truthy, and return that; raises AssertionError
    naming ``what`` (and the last value) after ``timeout_s`` seconds."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not {what} within {timeout_s:.0f} s (last: {value!r})")
        time.sleep(every_s)


def wait_for_count(
    what: str,
    found: Callable[[], Sequence[T]],
    count: int,
    timeout_s: float,
    every_s: float = 0.2,
) -> list[T]:
    """``found()`` as a list once it holds at least ``count`` items (polled every ``every_s``);
    raises AssertionError naming ``what``, ``count`` and the last items after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        items = list(found())
        if len(items) >= count:
            return items
        if time.monotonic() > deadline:
            raise AssertionError(
                f"{what}: expected {count} within {timeout_s:.0f} s, got {len(items)}: {items!r}"
            )
        time.sleep(every_s)
