"""The pipeline's adapters to the outside world: LLM backends, D-Bus notifications, the SSE stream,
the PostgreSQL stores, the plugin protocol on NATS, the capture client, the sensor snapshot, the
plugin registry, the notifier and the scheduler client the runner uses, and the recording format.
Each is standalone behind a small typed interface (kronii.pipeline.ports); app.py wires them."""
