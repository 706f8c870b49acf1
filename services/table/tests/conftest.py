"""Hypothesis profiles are registered by the repository plugin (rummy_testing.plugin)."""
