"""The scheduler's rules, pure: no I/O, time passed in (epoch seconds)."""
