"""A long property search runs its full count under CI and a smaller one in the developer's run."""

from __future__ import annotations

import pytest
from hypothesis import settings

from rummy_testing import profiles


def test_the_dev_profile_runs_the_dev_count_and_every_other_the_ci_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(profiles, "PROFILE", "dev")
    assert profiles.examples(ci=2000, dev=200) == 200
    for name in ("ci", "anything-else"):
        monkeypatch.setattr(profiles, "PROFILE", name)
        assert profiles.examples(ci=2000, dev=200) == 2000


@pytest.mark.parametrize(("ci", "dev"), [(10, 11), (10, 0), (0, 0)])
def test_a_dev_count_above_the_ci_count_or_below_one_is_refused(ci: int, dev: int) -> None:
    with pytest.raises(ValueError, match="1 <= dev <= ci"):
        profiles.examples(ci=ci, dev=dev)


def test_the_profile_named_is_the_one_hypothesis_runs_with() -> None:
    assert settings.get_current_profile_name() == profiles.PROFILE
    assert settings().derandomize == (profiles.PROFILE == "ci")
