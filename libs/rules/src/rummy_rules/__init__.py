"""Pure rules of the rummy family (stdlib only): no I/O, no clock, no randomness of its own."""
