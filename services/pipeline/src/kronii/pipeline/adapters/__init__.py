"""The pipeline's adapters to the outside world: LLM backends, D-Bus notifications, the SSE stream,
the PostgreSQL stores and their HTTP routers, the plugin protocol on NATS and the recording format.
Each is standalone behind a small typed interface; app.py wires them to the core."""
