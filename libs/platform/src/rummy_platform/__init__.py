"""Shared plumbing of the five services."""
