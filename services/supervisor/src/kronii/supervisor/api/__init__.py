"""The supervisor's thin API layers: protobuf conversion, HTTP router, gRPC servicer."""
