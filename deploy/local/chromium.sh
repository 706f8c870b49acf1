#!/usr/bin/env bash
# Chromium from Debian's package, for the verifier page's browser tests
# (tests/e2e/test_verify_page.py drives it headless with Playwright for Python; no browser is
# ever downloaded).
#
#   bash deploy/local/chromium.sh install   apt-get install chromium when /usr/bin/chromium is missing
#   bash deploy/local/chromium.sh status    exit 0 when chromium is on PATH (prints its version), 3 otherwise
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

present() { command -v chromium >/dev/null; }

version() { chromium --version 2>/dev/null | head -n 1; }

install() {
  if present; then say "chromium: present ($(version))"; return; fi
  apt_install chromium "chromium not found" "install Debian's chromium so that it is on PATH"
  present || die "apt-get installed chromium but it is not on PATH"
  say "chromium: installed ($(version))"
}

status() {
  if present; then
    say "chromium: $(command -v chromium) ($(version))"
  else
    say "chromium: not installed"; return 3
  fi
}

case "${1:-}" in
  install) lock chromium; install ;;
  status) status ;;
  *) die "usage: $0 {install|status}" ;;
esac
