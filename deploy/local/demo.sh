#!/usr/bin/env bash
# THE main job on a fresh machine (README.md): create .venv when missing, then `rummy demo`, which
# installs/starts PostgreSQL and Kafka (deploy/local/stack.sh), starts the five services as
# processes, lets bots play hands and matches through the public gRPC API, replays and verifies
# every hand and match, and stops what it started. Arguments go to `rummy demo` (see `.venv/bin/rummy demo --help`).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ensure_venv
cd "$ROOT"
exec "$ROOT/.venv/bin/rummy" demo "$@"
