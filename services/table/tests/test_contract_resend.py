"""The client side of the table's contract (``rummy_table.contract``): what is sent again, and
what is raised at once."""

from __future__ import annotations

from collections.abc import Callable

import grpc
import pytest

from rummy_table.contract import handed_over, resend
from rummy_testing.refusals import Refused


def _sender(*refusals: Refused) -> tuple[list[int], Callable[[], str]]:
    calls: list[int] = []

    def send() -> str:
        calls.append(1)
        if len(calls) <= len(refusals):
            raise refusals[len(calls) - 1]
        return "answered"

    return calls, send


def test_an_unavailable_naming_no_owner_is_sent_again_until_it_is_answered() -> None:
    handover = Refused(grpc.StatusCode.UNAVAILABLE)
    calls, send = _sender(handover, handover, handover)
    assert resend(send, handed_over, wait_s=30) == "answered"
    assert len(calls) == 4


@pytest.mark.parametrize(
    "refusal",
    [
        Refused(grpc.StatusCode.UNAVAILABLE, owner="10.0.0.2:50061"),  # a redirect: the caller's
        Refused(grpc.StatusCode.FAILED_PRECONDITION),
        Refused(grpc.StatusCode.INVALID_ARGUMENT),
    ],
)
def test_a_bound_client_raises_any_other_refusal_at_once(refusal: Refused) -> None:
    calls, send = _sender(refusal)
    with pytest.raises(grpc.RpcError) as raised:
        resend(send, handed_over, wait_s=30)
    assert raised.value is refusal and len(calls) == 1


def test_the_last_refusal_is_raised_once_the_wait_has_passed() -> None:
    handover = Refused(grpc.StatusCode.UNAVAILABLE)
    calls, send = _sender(*([handover] * 1000))
    with pytest.raises(grpc.RpcError) as raised:
        resend(send, handed_over, wait_s=0.3)
    assert raised.value is handover and 2 <= len(calls) < 1000


def test_a_learned_redirect_is_sent_again_without_a_pause() -> None:
    redirect = Refused(grpc.StatusCode.UNAVAILABLE, owner="10.0.0.2:50061")
    calls, send = _sender(*([redirect] * 20))
    assert resend(send, lambda _error: True, wait_s=30) == "answered"
    assert len(calls) == 21  # 20 backoffs would take seconds; at once they take none
