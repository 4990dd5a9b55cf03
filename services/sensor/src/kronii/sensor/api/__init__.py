"""The sensor's thin API layers over SensorOperations: protobuf conversion, HTTP router, gRPC servicer.
The sensor takes no NATS message, so it has no bus handlers."""
