"""The dealer's Prometheus series (default registry), as the handlers' ``Counters``."""

from __future__ import annotations

from prometheus_client import Counter

from rummy_dealer.application.ports import Counters


def counters() -> Counters:
    """``rummy_dealer_deals_total`` and ``rummy_dealer_reshuffles_total``. Call once per
    process (the series are registered in the default registry)."""
    deals = Counter("rummy_dealer_deals", "Hands dealt")
    reshuffles = Counter("rummy_dealer_reshuffles", "Stocks reshuffled from the discard pile")
    return Counters(dealt=deals.inc, reshuffled=reshuffles.inc)
