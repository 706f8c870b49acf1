"""The dealer's use cases: one module per group, taking and returning domain types."""
