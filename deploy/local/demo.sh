#!/usr/bin/env bash
# THE main job on a fresh machine (README.md): bring up PostgreSQL and Kafka, start every service
# that is runnable (`python -m rummy_<name>`), and print each one's gRPC health.
#
#   bash deploy/local/demo.sh          up: infrastructure, services, health
#   bash deploy/local/demo.sh down     stop the services, then the infrastructure
#
# Services log to .local/services/<name>.log. RUMMY_JWT_SECRET defaults to a secret generated once
# into .local/jwt-secret (mint tokens with it: `.venv/bin/rummy token ...`).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SERVICES=(table dealer ledger fairness clock)
declare -A GRPC_PORT=([table]=50051 [dealer]=50052 [ledger]=50053 [fairness]=50054 [clock]=50055)
declare -A METRICS_PORT=([table]=9101 [dealer]=9102 [ledger]=9103 [fairness]=9104 [clock]=9105)
SVC_DIR="$STATE/services"

runnable() { [ -f "$ROOT/services/$1/src/rummy_$1/__main__.py" ]; }

grpc_health() {  # grpc_health PORT -> prints SERVING / NOT_SERVING / an error
  "$PYTHON" - "$1" <<'PY'
import sys
import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
with grpc.insecure_channel(f"127.0.0.1:{sys.argv[1]}") as channel:
    try:
        grpc.channel_ready_future(channel).result(timeout=20)
        reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
        print(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))
    except Exception as exc:
        print(f"no answer ({type(exc).__name__})")
        sys.exit(1)
PY
}

up() {
  cd "$ROOT"
  if [ ! -x "$PYTHON" ]; then
    command -v uv >/dev/null || die "uv not found: python3 -m pip install uv==$UV_VERSION"
    UV_PYTHON_DOWNLOADS=never uv sync --locked
  fi
  bash "$LOCAL_DIR/stack.sh" up
  eval "$(bash "$LOCAL_DIR/stack.sh" env)"
  mkdir -p "$SVC_DIR"
  [ -f "$STATE/jwt-secret" ] || { "$PYTHON" -c 'import secrets; print(secrets.token_hex(32))' > "$STATE/jwt-secret"; chmod 600 "$STATE/jwt-secret"; }
  export RUMMY_JWT_SECRET="${RUMMY_JWT_SECRET:-$(cat "$STATE/jwt-secret")}"
  for svc in "${SERVICES[@]}"; do
    if ! runnable "$svc"; then say "$svc: not runnable yet (no rummy_$svc/__main__.py)"; continue; fi
    local pidfile="$SVC_DIR/$svc.pid"
    if [ -f "$pidfile" ] && pid_alive "$(cat "$pidfile")"; then say "$svc: already running (pid $(cat "$pidfile"))"; continue; fi
    RUMMY_GRPC_PORT="${GRPC_PORT[$svc]}" RUMMY_METRICS_PORT="${METRICS_PORT[$svc]}" \
      setsid "$PYTHON" -m "rummy_$svc" </dev/null >"$SVC_DIR/$svc.log" 2>&1 &
    echo $! > "$pidfile"
    say "$svc: started (pid $!), gRPC 127.0.0.1:${GRPC_PORT[$svc]}, metrics http://127.0.0.1:${METRICS_PORT[$svc]}/metrics"
  done
  say ""
  say "health:"
  local rc=0
  for svc in "${SERVICES[@]}"; do
    runnable "$svc" || continue
    local health
    health="$(grpc_health "${GRPC_PORT[$svc]}")" || rc=1
    printf '  %-9s %s\n' "$svc" "$health"
  done
  bash "$LOCAL_DIR/stack.sh" status | sed 's/^/  /'
  return "$rc"
}

down() {
  for svc in "${SERVICES[@]}"; do
    local pidfile="$SVC_DIR/$svc.pid"
    [ -f "$pidfile" ] || continue
    local pid; pid="$(cat "$pidfile")"
    if pid_alive "$pid"; then
      kill -TERM "$pid"
      for _ in $(seq 1 40); do pid_alive "$pid" || break; sleep 0.5; done
      pid_alive "$pid" && kill -KILL "$pid"
      say "$svc: stopped"
    fi
    rm -f "$pidfile"
  done
  bash "$LOCAL_DIR/stack.sh" down
}

case "${1:-up}" in
  up) up ;;
  down) down ;;
  *) die "usage: $0 [up|down]" ;;
esac
