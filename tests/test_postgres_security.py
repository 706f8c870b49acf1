"""PostgreSQL security (issue 32) against a real server of the test's own: the local cluster of
``deploy/local/postgres.sh`` with ``RUMMY_PG_TLS=1`` (TLS only, the ``postgres`` certificate of
a CA made for this run) on a free port, its state in a temporary folder, and the roles of
``postgres.sh roles``: each service's runtime role reads and writes its own schema only, cannot
change it, and the server refuses plaintext and clients that do not trust its CA."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from rummy_fairness.adapters import db as fairness_db
from rummy_ledger.adapters import db as ledger_db
from rummy_ops.certs import ensure_certs
from rummy_ops.pg_roles import provision_all
from rummy_ops.stack import HOST, free_port, repository_root
from rummy_platform.db import apply_migrations, migrate_service
from rummy_platform.db_roles import read_passfile, service_roles

pytestmark = [pytest.mark.slow, pytest.mark.integration]


@dataclass(frozen=True)
class SecureCluster:
    """The cluster: its state folder, role rummy's URL (verify-full) and the roles' URLs."""

    state: Path
    port: int
    admin_url: str
    urls: dict[str, dict[str, str]]

    def url(self, database: str = "rummy", **parameters: str) -> str:
        """Role rummy's URL to ``database`` with ``parameters`` as its query (no TLS given)."""
        query = "&".join(f"{k}={v}" for k, v in parameters.items())
        return f"postgresql://rummy:rummy@{HOST}:{self.port}/{database}?{query}"


def _script(env: dict[str, str], command: str) -> str:
    done = subprocess.run(
        ["bash", str(repository_root() / "deploy" / "local" / "postgres.sh"), command],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"postgres.sh {command}: {done.stdout}{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureCluster]:
    state = tmp_path_factory.mktemp("secure-pg")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(RUMMY_STATE_DIR=str(state), RUMMY_PG_PORT=str(port), RUMMY_PG_TLS="1")
    try:
        _script(env, "start")
        urls = json.loads(_script(env, "roles"))
        admin_url = _script(env, "url").strip()
        yield SecureCluster(state=state, port=port, admin_url=admin_url, urls=urls)
    finally:
        _script(env, "reset")  # stop, and delete the cluster
        if _server_log(state).parent.parent == Path("/var/tmp"):
            shutil.rmtree(_server_log(state).parent, ignore_errors=True)  # its log


@pytest.fixture(scope="module")
def migrated(cluster: SecureCluster) -> SecureCluster:
    """Both services' migrations applied as their owners, as the services do at start."""
    ledger, fairness = cluster.urls["ledger"], cluster.urls["fairness"]
    ledger_db.apply_migrations(ledger["DATABASE_URL"], owner_url=ledger["RUMMY_DATABASE_OWNER_URL"])
    migrate_service(
        fairness["DATABASE_URL"],
        fairness_db.MIGRATIONS_DIR,
        schema=fairness_db.SCHEMA,
        owner_url=fairness["RUMMY_DATABASE_OWNER_URL"],
    )
    return cluster


def _server_log(state: Path) -> Path:
    """postgres.log of the cluster of ``state`` (under /var/tmp when root's server user cannot
    reach ``state``: postgres.sh's rule)."""
    local = state / "pg" / "postgres.log"
    if local.exists():
        return local
    digest = hashlib.sha256(str(state).encode()).hexdigest()[:12]
    return Path("/var/tmp") / f"rummy-pg-{digest}" / "postgres.log"


def _refused(url: str, statement: str) -> str:
    with (
        psycopg.connect(url, autocommit=True) as conn,
        pytest.raises(psycopg.errors.InsufficientPrivilege) as caught,
    ):
        conn.execute(statement)
    return str(caught.value)


def test_the_ledgers_role_cannot_select_fairness_seeds_and_the_reverse(
    migrated: SecureCluster,
) -> None:
    ledger = migrated.urls["ledger"]["DATABASE_URL"]
    fairness = migrated.urls["fairness"]["DATABASE_URL"]
    assert "permission denied for schema fairness" in _refused(
        ledger, "SELECT * FROM fairness.server_seeds"
    )
    assert "permission denied for schema ledger" in _refused(
        fairness, "SELECT * FROM ledger.accounts"
    )
    assert "permission denied for schema ledger" in _refused(
        fairness, "SELECT * FROM ledger.journal_entries"
    )


def test_a_runtime_role_reads_and_writes_its_own_tables(migrated: SecureCluster) -> None:
    with psycopg.connect(migrated.urls["fairness"]["DATABASE_URL"]) as conn:
        assert conn.execute("SHOW search_path").fetchone() == ("fairness",)
        conn.execute(
            "INSERT INTO consumer_offsets (consumer_group, topic, partition, next_offset) "
            "VALUES ('g', 't', 0, 5)"
        )
        assert conn.execute("SELECT next_offset FROM consumer_offsets").fetchall() == [(5,)]
        conn.execute("UPDATE consumer_offsets SET next_offset = 6")
        conn.execute("DELETE FROM consumer_offsets")
        conn.rollback()
    with psycopg.connect(migrated.urls["ledger"]["DATABASE_URL"]) as conn:
        assert conn.execute("SELECT count(*) FROM accounts").fetchone() is not None


def test_a_runtime_role_cannot_change_a_schema_only_the_owner_can(
    migrated: SecureCluster,
) -> None:
    ledger = migrated.urls["ledger"]["DATABASE_URL"]
    assert "permission denied for schema ledger" in _refused(ledger, "CREATE TABLE t (a int)")
    assert "must be owner" in _refused(ledger, "ALTER TABLE accounts ADD COLUMN z int")
    assert "must be owner" in _refused(ledger, "DROP TABLE balances")
    assert "permission denied for schema public" in _refused(
        ledger, "CREATE TABLE public.t (a int)"
    )
    assert "permission denied for table _yoyo_migration" in _refused(
        ledger, "DELETE FROM _yoyo_migration"
    )
    with psycopg.connect(migrated.urls["ledger"]["RUMMY_DATABASE_OWNER_URL"]) as conn:
        conn.execute("CREATE TABLE t (a int)")  # the owner may (rolled back)
        conn.rollback()


def test_a_plaintext_connection_to_the_tls_cluster_is_refused(cluster: SecureCluster) -> None:
    with pytest.raises(psycopg.OperationalError) as caught:
        psycopg.connect(cluster.url(sslmode="disable"), connect_timeout=5).close()
    assert "no encryption" in str(caught.value)
    with psycopg.connect(cluster.admin_url) as conn:
        assert conn.info.pgconn.ssl_in_use


def test_verify_full_against_a_server_of_another_ca_fails(
    cluster: SecureCluster, tmp_path: Path
) -> None:
    other, _ = ensure_certs(tmp_path / "other")
    with pytest.raises(psycopg.OperationalError) as caught:
        psycopg.connect(
            cluster.url(sslmode="verify-full", sslrootcert=str(other.ca)), connect_timeout=5
        ).close()
    assert "certificate verify failed" in str(caught.value)


def test_no_password_of_the_roles_is_printed_or_logged(cluster: SecureCluster) -> None:
    passfile = cluster.state / "pg-roles.pgpass"
    assert passfile.stat().st_mode & 0o077 == 0
    passwords = read_passfile(passfile)
    assert len(passwords) == 4
    printed = json.dumps(cluster.urls)
    log = _server_log(cluster.state).read_text(errors="replace")
    assert "ready to accept connections" in log
    for password in passwords.values():
        assert password not in printed
        assert password not in log


def test_a_one_role_database_keeps_its_data_when_the_roles_are_made(
    cluster: SecureCluster,
) -> None:
    database = f"old_{secrets.token_hex(4)}"
    with psycopg.connect(cluster.admin_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {database}")
    old_url = cluster.admin_url.replace("/rummy?", f"/{database}?")
    # As before issue 32: one role (rummy) migrates and serves.
    ledger_db.apply_migrations(old_url)
    with psycopg.connect(old_url) as conn:
        conn.execute(
            "INSERT INTO ledger.consumer_offsets (consumer_group, topic, partition, next_offset) "
            "VALUES ('g', 't', 0, 41)"
        )
    prefix = f"{database}_"
    urls = provision_all(
        old_url,
        cluster.state / f"{database}.pgpass",
        ca_file=cluster.state / "certs" / "ca.pem",
        prefix=prefix,
    )["ledger"]
    roles = service_roles("ledger", prefix=prefix)
    runtime_url, owner_url = urls["DATABASE_URL"], urls["RUMMY_DATABASE_OWNER_URL"]
    ledger_db.apply_migrations(runtime_url, owner_url=owner_url)  # nothing pending; grants
    with psycopg.connect(runtime_url) as conn:
        assert conn.execute("SELECT next_offset FROM consumer_offsets").fetchall() == [(41,)]
        owners = conn.execute(
            "SELECT DISTINCT pg_get_userbyid(relowner) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'ledger'"
        ).fetchall()
    assert owners == [(roles.owner,)]
    apply_migrations(old_url, ledger_db.MIGRATIONS_DIR, schema="ledger")  # one role still works
    with psycopg.connect(cluster.admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {database} WITH (FORCE)")
        for schema in ("ledger", "fairness"):
            made = service_roles(schema, prefix=prefix)
            conn.execute(f"DROP ROLE {made.runtime}, {made.owner}")
