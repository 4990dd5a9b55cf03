"""The capture service's API: the gRPC servicer, the HTTP router, and the conversions they share."""
