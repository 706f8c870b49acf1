"""The `rummy` command line: tokens, local stack, demo, replay, export."""
