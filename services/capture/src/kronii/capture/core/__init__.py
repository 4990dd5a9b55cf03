"""The capture service's pure core: request validation, the job state machine as data, window
matching, admission (queue order, merging, rate limits), frame scoring, the circuit breaker,
capabilities and retention. No I/O, no asyncio; time is passed in as epoch milliseconds."""
