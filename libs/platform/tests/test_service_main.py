"""The bootstrap helpers of rummy_platform.service_main."""

from __future__ import annotations

import pytest

from rummy_platform.service_main import require_settings


def test_required_settings_that_are_all_set_come_back_in_order() -> None:
    assert require_settings("ledger", DATABASE_URL="postgresql://x", KAFKA="k:1") == (
        "postgresql://x",
        "k:1",
    )


@pytest.mark.parametrize("database_url", [None, ""])
def test_a_missing_required_setting_exits_2_naming_every_required_variable(
    database_url: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        require_settings(
            "fairness", DATABASE_URL=database_url, KAFKA_BOOTSTRAP_SERVERS="127.0.0.1:9092"
        )
    assert exited.value.code == 2
    assert capsys.readouterr().err == (
        "rummy fairness: DATABASE_URL and KAFKA_BOOTSTRAP_SERVERS must be set\n"
    )
