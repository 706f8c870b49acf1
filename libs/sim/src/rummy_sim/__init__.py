"""A deterministic simulator of the whole system (issue 33): the five services' real code in one
process on the in-memory log and stores, a virtual clock, one seeded random source, a seeded
scheduler, faults, and invariants after every step (libs/sim/README.md)."""
