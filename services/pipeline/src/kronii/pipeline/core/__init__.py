"""The pure core of the pipeline: no I/O, no asyncio, no clock. Time comes in as `now_ms` (epoch ms)."""
