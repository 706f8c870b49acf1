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
#
# With DATABASE_URL naming another server, start/status only check that it answers.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PG_STATE="$STATE/pg"
# As root the server runs as the postgres OS user, who must be able to reach its data folder. When
# the state folder lies under a folder others cannot enter (e.g. /root), the cluster lives in
# /var/tmp/rummy-pg-<hash of the state folder's path> instead.
if [ "$(id -u)" = 0 ] && id postgres >/dev/null 2>&1 && ! runuser -u postgres -- test -x "${RUMMY_STATE_DIR:-$ROOT}" 2>/dev/null; then
  PG_STATE="/var/tmp/rummy-pg-$(printf '%s' "${RUMMY_STATE_DIR:-$ROOT}" | sha256sum | cut -c1-12)"
fi
DATA="$PG_STATE/data"
LOG="$PG_STATE/postgres.log"
READY_TIMEOUT_S="${RUMMY_PG_READY_TIMEOUT:-60}"

external() { [ -n "${DATABASE_URL:-}" ] && [ "$DATABASE_URL" != "$LOCAL_DATABASE_URL" ]; }

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
  out="$(printf '%s\n' "CREATE ROLE rummy LOGIN CREATEDB PASSWORD 'rummy'" "CREATE DATABASE rummy OWNER rummy" \
    | as_owner "$bin/postgres" --single -D "$DATA" postgres 2>&1)" \
    || { printf '%s\n' "$out" >&2; rm -rf "$DATA"; die "could not create role and database rummy"; }
  echo "include_if_exists = 'rummy.conf'" >> "$DATA/postgresql.conf"
}

write_config() {
  # Rewritten on every start; edit this script, not the file.
  as_owner tee "$DATA/rummy.conf" >/dev/null <<CONF
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = ''
max_connections = 200
CONF
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
    ready postgres "$LOCAL_DATABASE_URL" "$READY_TIMEOUT_S" || die "postgres is running but does not answer; see $LOG"
    return
  fi
  if port_open "$PG_PORT"; then
    if ready postgres "$LOCAL_DATABASE_URL" 5; then
      say "postgres: a server not started from this checkout already answers on 127.0.0.1:$PG_PORT; reusing it"
      return
    fi
    die "port $PG_PORT is taken by something that does not accept rummy/rummy"
  fi
  require_venv
  [ -n "$(pg_bin)" ] || install
  prepare_dirs
  init_once
  write_config
  local t0=$SECONDS
  say "postgres: starting on 127.0.0.1:$PG_PORT, log ${LOG#"$ROOT"/}"
  [ "$(id -u)" = 0 ] && { touch "$LOG"; chown postgres: "$LOG"; }
  as_owner "$(pg_bin)/pg_ctl" start -D "$DATA" -l "$LOG" -w -t "$READY_TIMEOUT_S" >/dev/null 9>&- \
    || { tail -n 20 "$LOG" >&2; die "postgres did not start"; }
  ready postgres "$LOCAL_DATABASE_URL" "$READY_TIMEOUT_S" || die "postgres started but SELECT 1 failed; see $LOG"
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
  local url="$LOCAL_DATABASE_URL" where="127.0.0.1:$PG_PORT"
  if external; then url="$DATABASE_URL"; where="the DATABASE_URL given"; fi
  if ready postgres "$url" 0 >/dev/null 2>&1; then say "postgres: up at $where"; else say "postgres: down ($where does not answer)"; return 3; fi
}

case "${1:-}" in
  start|stop|install|reset) lock pg ;;
esac
case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  pid) if [ -d "$DATA" ] && [ -n "$(pg_bin)" ] && running; then head -n 1 "$DATA/postmaster.pid"; else exit 3; fi ;;
  reset) stop; rm -rf "$DATA"; say "postgres: cluster deleted (created again on the next start)" ;;
  *) die "usage: $0 {install|start|stop|status|pid|reset}" ;;
esac
