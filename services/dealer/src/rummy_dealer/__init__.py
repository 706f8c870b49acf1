"""The dealer service."""
