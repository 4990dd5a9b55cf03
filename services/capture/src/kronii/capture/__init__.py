"""kronii capture: on-demand, scored, redacted and encrypted screenshots of one window."""
