"""The clock's pure domain: deadlines, the schedule, the speed factor (no I/O, no clock)."""
