#!/usr/bin/env bash
# Node.js from Debian's package, for the tests that check the verifier's JavaScript against the
# Python (tests/test_verify_scorer_agreement.py, libs/rules/tests/test_shuffle_vectors_node.py,
# web/verify/cli.mjs in tests/e2e/test_verify_page.py).
#
#   bash deploy/local/node.sh install   apt-get install nodejs when node is missing
#   bash deploy/local/node.sh status    exit 0 when node is on PATH (prints its version), 3 otherwise
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

present() { command -v node >/dev/null; }

version() { node --version 2>/dev/null | head -n 1; }

install() {
  if present; then say "node: present ($(version))"; return; fi
  apt_install nodejs "node not found" "install Node.js 18+ so that node is on PATH"
  present || die "apt-get installed nodejs but node is not on PATH"
  say "node: installed ($(version))"
}

status() {
  if present; then
    say "node: $(command -v node) ($(version))"
  else
    say "node: not installed"; return 3
  fi
}

case "${1:-}" in
  install) lock node; install ;;
  status) status ;;
  *) die "usage: $0 {install|status}" ;;
esac
