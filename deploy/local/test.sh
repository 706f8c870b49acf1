#!/usr/bin/env bash
# THE test command (README.md names it, .ci/run runs it): the whole suite, or pytest arguments.
#
#   bash deploy/local/test.sh                      everything under libs/, services/ and tests/
#   bash deploy/local/test.sh -m "not slow"        the fast run: no service processes (README.md)
#   bash deploy/local/test.sh -m "not integration" only what needs no broker
#   bash deploy/local/test.sh libs/rules -x        any pytest arguments
#
# Creates .venv on first use. Tests marked `integration` find their brokers through
# KAFKA_BOOTSTRAP_SERVERS / DATABASE_URL, or start them with deploy/local (see tests/support).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cd "$ROOT"
ensure_venv
exec .venv/bin/pytest "$@"
