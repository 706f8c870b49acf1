"""The helpers of rummy_platform.db_roles that need no server: role names, the pgpass file and
the URLs a service is given (no password in them). The roles themselves are tested against a
real server in tests/test_postgres_security.py."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from rummy_platform.db_roles import (
    ensure_passfile,
    read_passfile,
    role_url,
    service_roles,
    url_role,
)


def test_a_service_has_an_owner_and_a_runtime_role_named_after_its_schema() -> None:
    roles = service_roles("ledger")
    assert (roles.schema, roles.owner, roles.runtime) == (
        "ledger",
        "rummy_ledger_owner",
        "rummy_ledger",
    )
    with pytest.raises(ValueError, match="must match"):
        service_roles("ledger; DROP")


def test_passwords_are_made_once_into_a_private_pgpass_file(tmp_path: Path) -> None:
    passfile = tmp_path / "roles.pgpass"
    first = ensure_passfile(passfile, ["a", "b"])
    assert passfile.stat().st_mode & 0o777 == 0o600
    assert first["a"] != first["b"]
    assert len(first["a"]) >= 40 and ":" not in first["a"] and "\\" not in first["a"]
    again = ensure_passfile(passfile, ["b", "c"])
    assert again["b"] == first["b"]
    assert read_passfile(passfile) == {**first, "c": again["c"]}
    assert passfile.read_text().splitlines()[0] == f"*:*:*:a:{first['a']}"


def test_a_role_url_carries_the_passfile_and_verify_full_but_no_password(tmp_path: Path) -> None:
    url = role_url(
        "postgresql://rummy:secret@127.0.0.1:15432/rummy?sslmode=disable&application_name=x",
        "rummy_ledger",
        passfile=tmp_path / "p",
        ca_file=tmp_path / "ca.pem",
    )
    parsed = psycopg.conninfo.conninfo_to_dict(url)
    assert "secret" not in url and "password" not in parsed
    assert parsed == {
        "user": "rummy_ledger",
        "host": "127.0.0.1",
        "port": "15432",
        "dbname": "rummy",
        "application_name": "x",
        "passfile": str(tmp_path / "p"),
        "sslmode": "verify-full",
        "sslrootcert": str(tmp_path / "ca.pem"),
    }
    assert url_role(url) == "rummy_ledger"
    plain = role_url("postgresql://a@db/rummy", "rummy_fairness", passfile=tmp_path / "p")
    assert "sslmode" not in plain
    with pytest.raises(ValueError, match="names no role"):
        url_role("postgresql://db.example/rummy")
    with pytest.raises(ValueError, match="not a database URL"):
        role_url("rummy", "r", passfile=tmp_path / "p")
