"""kronii sensor: the host agent that senses activity (state, focus, titles, lock)."""
