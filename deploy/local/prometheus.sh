#!/usr/bin/env bash
# Prometheus from Debian's package, for the tests that run a real Prometheus against the services
# (tests/e2e/test_prometheus_scrape.py) and for promtool (tests/test_deploy_config.py).
#
#   bash deploy/local/prometheus.sh install   apt-get install prometheus when prometheus or promtool is missing
#   bash deploy/local/prometheus.sh status    exit 0 when both binaries are on PATH (prints their versions), 3 otherwise
#
# The package's own service (prometheus.service, which policy-rc.d keeps from starting here) is
# never used: the tests run the binary themselves, on loopback, with a config and TSDB in a
# temporary folder.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

present() { command -v prometheus >/dev/null && command -v promtool >/dev/null; }

version() { "$1" --version 2>&1 | head -n 1; }

install() {
  if present; then say "prometheus: present ($(version prometheus))"; return; fi
  apt_install prometheus "prometheus or promtool not found" \
    "install Prometheus 2.x so that both are on PATH"
  present || die "apt-get installed prometheus but prometheus/promtool are not on PATH"
  say "prometheus: installed ($(version prometheus))"
}

status() {
  if present; then
    say "prometheus: $(command -v prometheus) ($(version prometheus)), $(command -v promtool)"
  else
    say "prometheus: not installed"; return 3
  fi
}

case "${1:-}" in
  install) lock prometheus; install ;;
  status) status ;;
  *) die "usage: $0 {install|status}" ;;
esac
