# Shared by the deploy/local scripts: paths, defaults and small helpers. Source it, don't run it.
# shellcheck shell=bash

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
LOCAL_DIR="$ROOT/deploy/local"
# RUMMY_STATE_DIR: another folder for the brokers' data, pid files, logs and locks (a second
# broker pair beside the first, e.g. `rummy soak`'s own); the jars stay in $ROOT/.local/kafka/libs.
STATE="${RUMMY_STATE_DIR:-$ROOT/.local}"

# Loopback ports: the defaults are libs/platform/src/rummy_platform/ports.py's table (Kafka 19092,
# its controller 19093, PostgreSQL 15432; tests/test_default_ports.py holds these lines to it). The
# RUMMY_* overrides exist only to run a second checkout beside the first; the defaults are the contract.
KAFKA_PORT="${RUMMY_KAFKA_PORT:-19092}"
KAFKA_CONTROLLER_PORT="${RUMMY_KAFKA_CONTROLLER_PORT:-19093}"
PG_PORT="${RUMMY_PG_PORT:-15432}"

LOCAL_KAFKA_BOOTSTRAP="127.0.0.1:$KAFKA_PORT"
LOCAL_DATABASE_URL="postgresql://rummy:rummy@127.0.0.1:$PG_PORT/rummy"

PYTHON="$ROOT/.venv/bin/python"
UV_VERSION="0.13.8"

say() { printf '%s\n' "$*"; }
# plain_text: copy stdin to stdout without terminal escape sequences (colours, cursor moves), so
# that a tool's output forwarded by `rummy up` / `rummy demo` reads the same in a file or a pipe.
plain_text() { sed -u 's/\x1b\[[0-9;?]*[A-Za-z]//g'; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# port_open PORT: true when something accepts TCP connections on 127.0.0.1:PORT.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

pid_alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

require_venv() {
  [ -x "$PYTHON" ] || die "no Python environment at $ROOT/.venv: run 'bash deploy/local/setup.sh' in $ROOT"
}

# apt_install PACKAGE MISSING OTHERWISE: install Debian's PACKAGE quietly (apt-get update first).
# Dies with "MISSING: install ... as root" when not root, and "MISSING and this is not a Debian
# system: OTHERWISE" without apt-get.
apt_install() {
  local package="$1" missing="$2" otherwise="$3"
  [ "$(id -u)" = 0 ] || die "$missing: install Debian's package as root (apt-get install -y $package)"
  command -v apt-get >/dev/null || die "$missing and this is not a Debian system: $otherwise"
  say "$package: installing Debian's $package package"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "$package" >/dev/null
}

# ensure_uv: the pinned uv, installed with the machine's pip when missing (a fresh machine has none).
ensure_uv() {
  command -v uv >/dev/null && return 0
  python3 -m pip install -q "uv==$UV_VERSION" 2>/dev/null \
    || python3 -m pip install -q --break-system-packages "uv==$UV_VERSION" \
    || die "could not install uv $UV_VERSION with python3 -m pip"
  command -v uv >/dev/null || export PATH="$HOME/.local/bin:$PATH"
  command -v uv >/dev/null || die "uv $UV_VERSION installed but not on PATH"
}

# ensure_venv: .venv at the repository root, exactly as uv.lock and the workspace's pyproject
# files say, on every run: created when missing, and synced when a pull changed them (a variant's
# entry point in a pyproject.toml, say, is seen only after a sync). Under a second when nothing
# changed.
ensure_venv() {
  ensure_uv
  (cd "$ROOT" && UV_PYTHON_DOWNLOADS=never uv sync --locked --quiet)
}

# ready KIND ADDRESS TIMEOUT_SECONDS: a real protocol round trip (see readiness.py).
ready() {
  require_venv
  "$PYTHON" "$LOCAL_DIR/readiness.py" "$1" "$2" --timeout "$3"
}

# lock NAME: hold an exclusive lock (.local/NAME.lock) until the script exits, so that two starts
# racing each other (e.g. two test sessions) do not both launch a broker. Long-running children
# must be started with `9>&-`, or they would hold the lock for their whole life.
lock() {
  mkdir -p "$STATE"
  exec 9>"$STATE/$1.lock"
  flock -w 300 9 || die "another deploy/local script held $STATE/$1.lock for 5 minutes"
}
