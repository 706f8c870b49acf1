"""The services that call others (the dealer, the table) read the services' private key from
the file ``RUMMY_SERVICE_TOKEN_KEY_FILE`` names, and refuse to start without a readable one;
the others read no private key at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from rummy_dealer.config import DealerSettings
from rummy_platform.config import ConfigError, Settings
from rummy_table.config import TableSettings
from rummy_testing.settings_env import use_settings_environment
from rummy_testing.token_keys import suite_key_files, token_environment

BROKERS = {"KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1"}


@pytest.mark.parametrize("settings", [DealerSettings, TableSettings])
def test_a_calling_service_without_the_services_private_key_file_is_refused(
    monkeypatch: pytest.MonkeyPatch, settings: type[Settings]
) -> None:
    env = {**token_environment(), **BROKERS}
    env.pop("RUMMY_SERVICE_TOKEN_KEY_FILE")
    use_settings_environment(monkeypatch, env)
    with pytest.raises(ConfigError, match="RUMMY_SERVICE_TOKEN_KEY_FILE is not set"):
        settings.load()


@pytest.mark.parametrize("settings", [DealerSettings, TableSettings])
def test_a_public_key_file_is_no_private_key(
    monkeypatch: pytest.MonkeyPatch, settings: type[Settings]
) -> None:
    public = str(suite_key_files().service_public_keys)
    env = {**token_environment(), **BROKERS, "RUMMY_SERVICE_TOKEN_KEY_FILE": public}
    use_settings_environment(monkeypatch, env)
    with pytest.raises(ConfigError, match="holds no unencrypted PEM private key"):
        settings.load()


def test_a_calling_service_reads_the_key_file_it_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    use_settings_environment(monkeypatch, {**token_environment(), **BROKERS})
    loaded = DealerSettings.load()
    assert loaded.service_token_key_file == Path(suite_key_files().service_key)
    assert "service_token_key_file" not in Settings.model_fields  # the others: no private key
