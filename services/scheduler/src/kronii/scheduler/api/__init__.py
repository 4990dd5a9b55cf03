"""The scheduler's surfaces: HTTP (FastAPI) and gRPC, both thin over SchedulerApp."""
