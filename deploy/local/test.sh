#!/usr/bin/env bash
# THE test command (README.md names it, .ci/run runs it): the whole suite, or pytest arguments.
#
#   bash deploy/local/test.sh                      everything under libs/, services/ and tests/
#   bash deploy/local/test.sh -m "not slow"        the fast run: no service processes (README.md)
#   bash deploy/local/test.sh -m "not integration" the unit tier: in-process tests only, on every core
#   bash deploy/local/test.sh libs/rules -x        any pytest arguments
#
# The unit tier (`-m "not integration"`, or `-m "not slow and not integration"`) runs on every core
# (pytest-xdist's `-n auto`) unless the arguments choose (`-n 0`: one process, for -s or --pdb);
# every other run, CI's whole suite included, runs in one process. Creates .venv on first use.
# Tests marked `integration` find their brokers through KAFKA_BOOTSTRAP_SERVERS / DATABASE_URL,
# or start them with deploy/local (see tests/support).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cd "$ROOT"
ensure_venv

# unit_tier ARGS...: true when `-m` selects exactly the unit tier and no `-n`/`--numprocesses`
# (or `-p no:xdist`) is given. The unit tests run in-process on free ports and tmp folders only, so
# they are safe side by side; the integration tests share brokers and start processes, so not.
unit_tier() {
  local unit=false previous=""
  for arg in "$@"; do
    case "$arg" in -n | -n* | --numprocesses | --numprocesses=* | --dist* | no:xdist) return 1 ;; esac
    if [ "$previous" = "-m" ]; then
      case "$arg" in
        "not integration" | "not slow and not integration" | "not integration and not slow") unit=true ;;
        *) return 1 ;;
      esac
    fi
    previous="$arg"
  done
  [ "$unit" = true ]
}

if unit_tier "$@"; then
  if .venv/bin/python -c "import xdist" 2>/dev/null; then
    set -- -n auto "$@"
  else
    echo "test.sh: no pytest-xdist in .venv (uv sync --locked adds it): one process" >&2
  fi
fi
exec .venv/bin/pytest "$@"
