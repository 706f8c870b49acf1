"""Outbound adapters of the clock: its time sources, the metrics (implementing
``rummy_clock.application.ports``; built by ``rummy_clock.bootstrap`` only)."""
