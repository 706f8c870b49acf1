#!/usr/bin/env bash
# Creates (or re-syncs) the repository's one Python environment, .venv, from uv.lock, installing the
# pinned uv with pip first when the machine has none. PostgreSQL and the Kafka jars are set up by
# stack.sh when something first needs them.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ensure_uv
cd "$ROOT" && UV_PYTHON_DOWNLOADS=never uv sync --locked
