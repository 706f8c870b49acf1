"""Test support shared by every test suite of the repository (loaded as a pytest plugin).

The root ``pyproject.toml`` puts ``tests/support`` on pytest's ``pythonpath`` and loads
``rummy_testing.plugin`` with ``-p``, so its fixtures (``kafka_bootstrap``, ``database_url``) and
hypothesis profiles reach tests under ``libs/``, ``services/`` and ``tests/`` alike.
"""
