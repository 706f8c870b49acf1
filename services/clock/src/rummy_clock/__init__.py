"""The clock service."""
