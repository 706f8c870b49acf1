"""The fairness service."""
