"""The table's domain refuses with its own errors (rummy_table.domain.errors, no gRPC status);
the application ends the call with the status and message clients saw before the domain moved
into the service (issue 28), and nothing is appended."""

from __future__ import annotations

import pytest
from world import World

from rummy_platform.errors import FailedPrecondition, InvalidArgument, PermissionDenied
from rummy_table.application import commands as c
from rummy_table.application.commit import STATUS_OF_REFUSAL
from rummy_table.domain import errors, seating


def _refusals(cls: type[errors.TableRefused]) -> list[type[errors.TableRefused]]:
    return [cls, *(s for sub in cls.__subclasses__() for s in _refusals(sub))]


def test_every_refusal_of_the_domain_has_a_status() -> None:
    refusals = set(_refusals(errors.TableRefused)) - {errors.TableRefused}
    assert refusals == set(STATUS_OF_REFUSAL)


def test_the_domain_raises_its_own_errors_and_the_caller_gets_the_same_statuses() -> None:
    world = World()
    table_id = world.open_table()
    world.sit(table_id, "alice", 0)
    table = world.app.projection.tables[table_id]
    with pytest.raises(errors.BadRequest, match=r"seats are numbered 0\.\.3"):
        seating.take_seat(table, "bob", 7)
    with pytest.raises(errors.WrongState, match="seat 0 is taken"):
        seating.take_seat(table, "bob", 0)
    with pytest.raises(errors.NotPermitted, match="you do not sit at this table"):
        seating.leave(table, "bob", 0)
    version = table.version
    with pytest.raises(InvalidArgument, match=r"seats are numbered 0\.\.3"):
        world.sit(table_id, "bob", 7)
    with pytest.raises(FailedPrecondition, match="seat 0 is taken"):
        world.sit(table_id, "bob", 0)
    with pytest.raises(FailedPrecondition, match="you already sit at seat 0"):
        world.sit(table_id, "alice", 1)
    with pytest.raises(PermissionDenied, match="you do not sit at this table"):
        world.app.leave_table(
            c.LeaveTable(
                account_id="bob", client_request_id="leave-1", request_digest="", table_id=table_id
            )
        )
    assert table.version == version  # nothing appended for a refusal
