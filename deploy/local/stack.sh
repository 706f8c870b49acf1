#!/usr/bin/env bash
# The local infrastructure in one command: PostgreSQL and a single-node Kafka on loopback.
#
#   bash deploy/local/stack.sh up       start both (idempotent: a running broker is reused)
#   bash deploy/local/stack.sh down     stop what this checkout started
#   bash deploy/local/stack.sh status   exit 0 when both answer a real round trip
#   bash deploy/local/stack.sh reset    stop both and delete their data (topics, databases)
#   bash deploy/local/stack.sh env      print the export lines for KAFKA_BOOTSTRAP_SERVERS and DATABASE_URL
#                                        (eval "$(bash deploy/local/stack.sh env)"; with
#                                        RUMMY_PG_TLS=1 the URL has sslmode=verify-full)
#
# KAFKA_BOOTSTRAP_SERVERS / DATABASE_URL naming other servers are checked, never started or stopped.
set -euo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
source "$here/lib.sh"

case "${1:-}" in
  up)
    bash "$here/postgres.sh" start
    bash "$here/kafka.sh" start
    ;;
  down)
    bash "$here/kafka.sh" stop
    bash "$here/postgres.sh" stop
    ;;
  reset)
    bash "$here/kafka.sh" reset
    bash "$here/postgres.sh" reset
    ;;
  status)
    rc=0
    bash "$here/postgres.sh" status || rc=$?
    bash "$here/kafka.sh" status || rc=$?
    exit "$rc"
    ;;
  env)
    printf 'export KAFKA_BOOTSTRAP_SERVERS=%q\n' "${KAFKA_BOOTSTRAP_SERVERS:-$LOCAL_KAFKA_BOOTSTRAP}"
    printf 'export DATABASE_URL=%q\n' "${DATABASE_URL:-$(bash "$here/postgres.sh" url)}"
    ;;
  *) die "usage: $0 {up|down|status|env|reset}" ;;
esac
