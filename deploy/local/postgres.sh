#!/usr/bin/env bash
# PostgreSQL from Debian's package, one cluster in .local/pg/data on 127.0.0.1 only, with role
# rummy (password rummy, may create databases for test suites) owning database rummy. As root the server runs as the postgres OS user.
#
#   bash deploy/local/postgres.sh install   apt-get install postgresql when no server binaries exist
#   bash deploy/local/postgres.sh start     initdb (once), start, wait for a SELECT 1 round trip
#   bash deploy/local/postgres.sh stop      stop the cluster this checkout started
#   bash deploy/local/postgres.sh status    exit 0 when SELECT 1 answers, 3 otherwise
#   bash deploy/local/postgres.sh pid       print the pid of the server this checkout started (3: none)
#   bash deploy/local/postgres.sh reset     stop, and delete the cluster (created again on next start)
#   bash deploy/local/postgres.sh roles     make an owner and a runtime role per service (ledger,
#                                           fairness), passwords generated once into
#                                           .local/pg-roles.pgpass (0600); print their URLs as JSON
#   bash deploy/local/postgres.sh url       print the URL of role rummy (with TLS: verify-full)
#
# RUMMY_PG_TLS=1 (opt-in, issue 32): serve TLS only, with the `postgres` certificate of
# $RUMMY_PG_CERTS_DIR (default .local/certs, made by `rummy certs` when missing); pg_hba.conf then
# has hostssl lines only, so a plaintext client is refused, and the URLs carry
# sslmode=verify-full&sslrootcert=<ca.pem>. Switching it needs a stop first.
#
# With DATABASE_URL naming another server, start/status only check that it answers.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PG_STATE="$STATE/pg"
# As root the server runs as the postgres OS user, who must be able to reach its data folder. When
# the state folder lies under a folder others cannot enter (e.g. /root), the cluster lives in
# /var/tmp/rummy-pg-<hash of the state folder's path> instead. The state folder is made first, so
# that the choice is the same on the first start as on every later one.
if [ -n "${RUMMY_STATE_DIR:-}" ]; then mkdir -p "$RUMMY_STATE_DIR"; fi
if [ "$(id -u)" = 0 ] && id postgres >/dev/null 2>&1 && ! runuser -u postgres -- test -x "${RUMMY_STATE_DIR:-$ROOT}" 2>/dev/null; then
  PG_STATE="/var/tmp/rummy-pg-$(printf '%s' "${RUMMY_STATE_DIR:-$ROOT}" | sha256sum | cut -c1-12)"
fi
DATA="$PG_STATE/data"
LOG="$PG_STATE/postgres.log"
READY_TIMEOUT_S="${RUMMY_PG_READY_TIMEOUT:-60}"
CERTS="${RUMMY_PG_CERTS_DIR:-$STATE/certs}"
PASSFILE="$STATE/pg-roles.pgpass"
tls_on() { [ "${RUMMY_PG_TLS:-0}" = 1 ]; }
# The URL this script checks the cluster with (role rummy; with TLS, verify-full against the CA).
if tls_on; then
  LOCAL_URL="$LOCAL_DATABASE_URL?sslmode=verify-full&sslrootcert=$CERTS/ca.pem"
else
  LOCAL_URL="$LOCAL_DATABASE_URL"
fi

external() { [ -n "${DATABASE_URL:-}" ] && [ "$DATABASE_URL" != "$LOCAL_DATABASE_URL" ] && [ "$DATABASE_URL" != "$LOCAL_URL" ]; }

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

install() {
  if [ -n "$(pg_bin)" ]; then say "postgres: server binaries present in $(pg_bin)"; return; fi
  apt_install postgresql "PostgreSQL server not found under /usr/lib/postgresql" \
    "install PostgreSQL, or set DATABASE_URL to an existing server"
  [ -n "$(pg_bin)" ] || die "apt-get installed postgresql but no /usr/lib/postgresql/*/bin exists"
  say "postgres: installed $(pg_bin)"
}

# As root, server commands run as the postgres OS user (the server refuses to run as root).
as_owner() {
  if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

prepare_dirs() {
  mkdir -p "$PG_STATE"
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || die "no 'postgres' OS user: reinstall Debian's postgresql package"
    chown postgres: "$PG_STATE"
    as_owner test -w "$PG_STATE" || die "the postgres user cannot write to $PG_STATE"
  fi
}

init_once() {
  [ -f "$DATA/PG_VERSION" ] && return
  local bin; bin="$(pg_bin)"
  say "postgres: creating a cluster in ${DATA#"$ROOT"/}"
  rm -rf "$DATA"
  as_owner "$bin/initdb" -D "$DATA" -U postgres -E UTF8 --locale=C.UTF-8 \
    --auth-local=peer --auth-host=scram-sha-256 >/dev/null
  # Single-user mode creates the application role and database before the server ever listens.
  local out
  out="$(printf '%s\n' "CREATE ROLE rummy LOGIN CREATEDB CREATEROLE PASSWORD 'rummy'" "CREATE DATABASE rummy OWNER rummy" \
    | as_owner "$bin/postgres" --single -D "$DATA" postgres 2>&1)" \
    || { printf '%s\n' "$out" >&2; rm -rf "$DATA"; die "could not create role and database rummy"; }
  echo "include_if_exists = 'rummy.conf'" >> "$DATA/postgresql.conf"
  as_owner touch "$DATA/rummy-createrole"
}

# A cluster made before issue 32 gave rummy no CREATEROLE (needed by `roles`): given once, in
# single-user mode while the server is stopped.
createrole_once() {
  [ -f "$DATA/rummy-createrole" ] && return
  local out
  out="$(echo "ALTER ROLE rummy CREATEROLE" | as_owner "$(pg_bin)/postgres" --single -D "$DATA" postgres 2>&1)" \
    || { printf '%s\n' "$out" >&2; die "could not give role rummy CREATEROLE"; }
  as_owner touch "$DATA/rummy-createrole"
}

# With TLS the server's certificate and key are copied into the data folder (the server's OS
# user must own the key, mode 0600, and may not reach .local/certs when run as root).
prepare_tls() {
  tls_on || return 0
  if [ ! -f "$CERTS/postgres.pem" ] || [ ! -f "$CERTS/postgres-key.pem" ]; then
    "$ROOT/.venv/bin/rummy" certs --dir "$CERTS" >/dev/null || die "rummy certs --dir $CERTS failed"
  fi
  as_owner mkdir -p "$DATA/tls"
  as_owner chmod 700 "$DATA/tls"
  as_owner tee "$DATA/tls/server.pem" >/dev/null < "$CERTS/postgres.pem"
  as_owner install -m 600 /dev/null "$DATA/tls/server-key.pem"
  as_owner tee "$DATA/tls/server-key.pem" >/dev/null < "$CERTS/postgres-key.pem"
}

write_config() {
  # Rewritten on every start; edit this script, not the file.
  as_owner tee "$DATA/rummy.conf" >/dev/null <<CONF
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = ''
max_connections = 200
hba_file = '$DATA/rummy_hba.conf'
CONF
  if tls_on; then
    as_owner tee -a "$DATA/rummy.conf" >/dev/null <<CONF
ssl = on
ssl_cert_file = '$DATA/tls/server.pem'
ssl_key_file = '$DATA/tls/server-key.pem'
ssl_min_protocol_version = 'TLSv1.2'
CONF
  fi
  # Password (SCRAM) over loopback only; with TLS, over TLS only (hostssl), so plaintext is refused.
  local host=host; tls_on && host=hostssl
  as_owner tee "$DATA/rummy_hba.conf" >/dev/null <<HBA
local all all peer
$host all all 127.0.0.1/32 scram-sha-256
$host all all ::1/128 scram-sha-256
HBA
}

running() { [ -f "$DATA/postmaster.pid" ] && as_owner "$(pg_bin)/pg_ctl" status -D "$DATA" >/dev/null 2>&1; }

start() {
  if external; then
    say "postgres: DATABASE_URL names another server; only checking it"
    ready postgres "$DATABASE_URL" 30 || die "no PostgreSQL answers at the DATABASE_URL given"
    return
  fi
  if [ -d "$DATA" ] && [ -n "$(pg_bin)" ] && running; then
    say "postgres: already running ($(head -n 1 "$DATA/postmaster.pid" | sed 's/^/pid /'))"
    ready postgres "$LOCAL_URL" "$READY_TIMEOUT_S" \
      || die "postgres is running but does not answer $(tls_on && echo "over TLS" || echo plaintext) (stop it to switch RUMMY_PG_TLS); see $LOG"
    return
  fi
  if port_open "$PG_PORT"; then
    if ready postgres "$LOCAL_URL" 5; then
      say "postgres: a server not started from this checkout already answers on 127.0.0.1:$PG_PORT; reusing it"
      return
    fi
    die "port $PG_PORT is taken by something that does not accept rummy/rummy"
  fi
  require_venv
  [ -n "$(pg_bin)" ] || install
  prepare_dirs
  init_once
  createrole_once
  prepare_tls
  write_config
  local t0=$SECONDS
  say "postgres: starting on 127.0.0.1:$PG_PORT$(tls_on && echo " (TLS only)"), log ${LOG#"$ROOT"/}"
  [ "$(id -u)" = 0 ] && { touch "$LOG"; chown postgres: "$LOG"; }
  as_owner "$(pg_bin)/pg_ctl" start -D "$DATA" -l "$LOG" -w -t "$READY_TIMEOUT_S" >/dev/null 9>&- \
    || { tail -n 20 "$LOG" >&2; die "postgres did not start"; }
  ready postgres "$LOCAL_URL" "$READY_TIMEOUT_S" || die "postgres started but SELECT 1 failed; see $LOG"
  say "postgres: ready after $((SECONDS - t0))s"
}

stop() {
  if [ -d "$DATA" ] && [ -n "$(pg_bin)" ] && running; then
    as_owner "$(pg_bin)/pg_ctl" stop -D "$DATA" -m fast -w >/dev/null
    say "postgres: stopped"
  elif port_open "$PG_PORT"; then
    say "postgres: the server on 127.0.0.1:$PG_PORT was not started from this checkout; leaving it running"
  else
    say "postgres: not running"
  fi
}

status() {
  local url="$LOCAL_URL" where="127.0.0.1:$PG_PORT"
  if external; then url="$DATABASE_URL"; where="the DATABASE_URL given"; fi
  if ready postgres "$url" 0 >/dev/null 2>&1; then say "postgres: up at $where"; else say "postgres: down ($where does not answer)"; return 3; fi
}

# roles: the owner and runtime role of every service's schema (rummy_ops.pg_roles), as role
# rummy (its URL passed in the environment, never on the command line).
roles() {
  require_venv
  external && die "roles makes roles in the local cluster only (DATABASE_URL names another server)"
  local ca=(); tls_on && ca=(--ca-file "$CERTS/ca.pem")
  RUMMY_PG_ADMIN_URL="$LOCAL_URL" "$PYTHON" -m rummy_ops.pg_roles "$PASSFILE" "${ca[@]}"
}

case "${1:-}" in
  start|stop|install|reset|roles) lock pg ;;
esac
case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  pid) if [ -d "$DATA" ] && [ -n "$(pg_bin)" ] && running; then head -n 1 "$DATA/postmaster.pid"; else exit 3; fi ;;
  reset) stop; rm -rf "$DATA" "$PASSFILE"; say "postgres: cluster deleted (created again on the next start)" ;;
  roles) roles ;;
  url) say "$LOCAL_URL" ;;
  *) die "usage: $0 {install|start|stop|status|pid|reset|roles|url}" ;;
esac
