"""The scheduler's surfaces: HTTP (FastAPI), gRPC and the NATS handlers, all thin over
SchedulerOperations."""
