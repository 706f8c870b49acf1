"""This process's TLS client variables and the test stacks that set them.

A running test stack (:func:`rummy_testing.stacks.running_stack`) points this process's clients
at itself through :data:`CLIENT_VARIABLES` (the ``client`` certificate, or ``RUMMY_INSECURE=1``
for a plaintext one) until it stops; the e2e tier's session stack stops only when the session
ends. :func:`without_stack_clients` gives a test, or a service process it starts, the variables
as they were before any stack set them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from rummy_ops.certs import TLS_VARIABLES

#: The variables by which this process's clients dial a running stack as it serves.
CLIENT_VARIABLES = (*TLS_VARIABLES, "RUMMY_INSECURE")
#: Each running stack's :data:`CLIENT_VARIABLES` as they were before it started, outermost first.
before_stacks: list[dict[str, str | None]] = []


def set_environment(values: Mapping[str, str | None]) -> None:
    """Set each variable of ``values`` in this process's environment (None: remove it)."""
    for variable, value in values.items():
        if value is None:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = value


@contextmanager
def without_stack_clients() -> Iterator[None]:
    """Within the block, this process's :data:`CLIENT_VARIABLES` as they were before any
    running stack set them, and the stacks' again afterwards: for a test that is no client of
    a stack still running around it (a session's stack stays up until the session ends; the
    plug-in wraps every test outside ``tests/e2e`` in this)."""
    if not before_stacks:
        yield
        return
    during = {variable: os.environ.get(variable) for variable in CLIENT_VARIABLES}
    set_environment(before_stacks[0])
    try:
        yield
    finally:
        set_environment(during)
