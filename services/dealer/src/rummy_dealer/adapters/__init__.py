"""Outbound adapters of the dealer: the fairness client, the stream versions, the metrics
(implementing ``rummy_dealer.application.ports``; built by ``rummy_dealer.bootstrap`` only)."""
