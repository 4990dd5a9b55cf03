"""The scheduler's outside world: Redis timers and state, NATS request/reply."""
