"""The search of tests/e2e/test_no_secret_in_logs.py finds each kind of secret it looks for, in
the forms our own code makes them: a token the issuer mints, a key file it writes, a database
URL."""

from __future__ import annotations

from pathlib import Path

from rummy_platform.auth import TokenAuthority
from rummy_platform.token_keys import ensure_key_files
from rummy_testing.leaks import leaks, private_key_lines


def test_a_minted_token_a_private_key_and_a_password_are_each_found(tmp_path: Path) -> None:
    files = ensure_key_files(tmp_path / "keys")
    token = TokenAuthority.of_issuer(files).issue("alice", "player")
    key_lines = private_key_lines([files.issuer_key, files.issuer_public_keys])
    key_text = files.issuer_key.read_text()
    body = next(line for line in key_text.splitlines() if "-----" not in line)
    assert key_lines == {body}  # the public key's file holds no private key
    log = "\n".join(
        [
            f'{{"event": "call", "authorization": "Bearer {token}"}}',
            f'{{"event": "key", "value": "{body}"}}',
            '{"event": "db", "url": "postgresql://ledger:s3cret@127.0.0.1:25432/rummy"}',
        ]
    )
    found = leaks(log, key_lines, ["s3cret"])
    assert len(found) == 4, found
    assert leaks(key_text) == ["a PEM private key block"]


def test_a_log_of_ids_hashes_and_urls_without_passwords_holds_no_secret() -> None:
    log = (
        '{"event": "hand ended", "table_id": "t-1", "hand_id": "eyJhbGciOi", '
        '"commitment": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", '
        '"url": "postgresql://rummy@127.0.0.1:25432/rummy", "metrics": "http://127.0.0.1:15151/"}'
    )
    assert leaks(log, {"MC4CAQAwBQYDK2VwBCIEI"}, ["s3cret"]) == []
