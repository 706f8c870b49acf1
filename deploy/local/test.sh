#!/usr/bin/env bash
# THE test command (README.md names it; .ci/run runs exactly it, from a clone in an empty folder,
# with nothing exported): the whole suite, or pytest arguments.
#
#   bash deploy/local/test.sh                      everything under libs/, services/ and tests/: what CI runs
#   bash deploy/local/test.sh -m "not slow"        the fast run: no service processes (docs/testing.md)
#   bash deploy/local/test.sh -m "not integration" the unit tier: in-process tests only, on every core
#   bash deploy/local/test.sh libs/rules -x        any pytest arguments
#
# What a run gets, by what it selects (docs/testing.md#tests):
# - The unit tier (`-m "not integration"`, or `-m "not slow and not integration"`): nothing but
#   .venv. No broker can start (every test that asks for one is marked `integration`, so none is
#   selected) and nothing is installed. It runs on every core (pytest-xdist's `-n auto`) unless the
#   arguments choose (`-n 0`: one process, for -s or --pdb).
# - Every other run, in one process: first the tools the integration tests run, each installed
#   from Debian's packages when missing (as root: deploy/local/{postgres,prometheus,chromium,node}.sh
#   install) and the Kafka broker's jars (kafka.sh fetch). A tool that cannot be installed (not
#   root, no apt-get) is said here, and the tests that need it fail saying so: no test is skipped
#   for a missing tool or broker. The brokers start when the first test asks for one (the
#   fixtures of tests/support/rummy_testing/brokers.py: KAFKA_BOOTSTRAP_SERVERS / DATABASE_URL when
#   given, else a container when a Docker engine answers, else deploy/local/{kafka,postgres}.sh
#   start). When the run ends (passed, failed, or interrupted by Ctrl-C or SIGTERM) the local
#   brokers that were not running when it began are stopped; brokers it found running (yours,
#   `rummy up`'s, another test run's) stay up. Two runs at once in one checkout share them: the
#   last one to end stops what either started.
# - The whole suite (no arguments) loads the hypothesis profile `ci` (derandomized, the long
#   property searches at full size), exactly as CI runs it; any selection loads `dev`. An
#   exported HYPOTHESIS_PROFILE wins in both cases.
# Creates .venv on first use. Exit status: pytest's (5: no tests collected).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cd "$ROOT"
ensure_venv

# unit_tier ARGS...: true when `-m` selects exactly the unit tier. The unit tests run in-process on
# free ports and tmp folders only, so they are safe side by side; the integration tests share
# brokers and start processes, so not.
unit_tier() {
  local unit=false previous=""
  for arg in "$@"; do
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

# chooses_processes ARGS...: true when the arguments say how many processes (or turn xdist off).
chooses_processes() {
  for arg in "$@"; do
    case "$arg" in -n | -n* | --numprocesses | --numprocesses=* | --dist* | no:xdist) return 0 ;; esac
  done
  return 1
}

if unit_tier "$@"; then
  if ! chooses_processes "$@"; then
    if .venv/bin/python -c "import xdist" 2>/dev/null; then
      set -- -n auto "$@"
    else
      echo "test.sh: no pytest-xdist in .venv (uv sync --locked adds it): one process" >&2
    fi
  fi
  exec .venv/bin/pytest "$@"
fi

# -- every other run: the tools, then pytest, then the brokers it started are stopped -------------

if [ "$#" -eq 0 ]; then export HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-ci}"; fi

prepare() {
  local t0=$SECONDS missing=()
  for tool in postgres prometheus chromium node; do
    bash "$LOCAL_DIR/$tool.sh" install || missing+=("$tool")
  done
  bash "$LOCAL_DIR/kafka.sh" fetch || missing+=("the Kafka jars")
  if [ "${#missing[@]}" -gt 0 ]; then
    say "test.sh: could not install ${missing[*]} (see above): the tests that need them will fail"
  fi
  say "test.sh: tools ready in $((SECONDS - t0))s"
}

# our_broker NAME: the pid of the local broker NAME (kafka, postgres) started from this checkout.
our_broker() { bash "$LOCAL_DIR/$1.sh" pid 2>/dev/null; }

# The test runs of this checkout hold a shared lock on fd 8 while they run (pytest never inherits
# it); a run that ends while another holds it leaves the brokers it started to that one
# ($STARTED lists them), and the last run to end stops them.
mkdir -p "$STATE"
RUNS_LOCK="$STATE/test-runs.lock"
STARTED="$STATE/brokers-started-by-test-runs"
exec 8>"$RUNS_LOCK"
flock -s 8
RUNNING_BEFORE=()
for broker in kafka postgres; do
  if our_broker "$broker" >/dev/null; then RUNNING_BEFORE+=("$broker"); fi
done

stop_started_brokers() {
  trap '' INT TERM  # a second Ctrl-C must not leave a broker half stopped (children inherit this)
  for broker in kafka postgres; do
    case " ${RUNNING_BEFORE[*]:-} " in *" $broker "*) continue ;; esac
    if our_broker "$broker" >/dev/null; then echo "$broker" >>"$STARTED"; fi
  done
  [ -s "$STARTED" ] || return 0
  if ! flock -n -x 8; then
    say "test.sh: another test run of this checkout is still going; it stops the brokers started by the runs ($(sort -u "$STARTED" | xargs))"
    return 0
  fi
  for broker in $(sort -u "$STARTED"); do
    say "test.sh: stopping $broker (started by this test run; it was not running before)"
    bash "$LOCAL_DIR/$broker.sh" stop || true
  done
  rm -f "$STARTED"
}
trap 'status=$?; stop_started_brokers; exit "$status"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

prepare
status=0
.venv/bin/pytest "$@" 8>&- || status=$?
exit "$status"
