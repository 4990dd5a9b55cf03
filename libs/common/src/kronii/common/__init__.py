"""kronii's shared library: settings, bus, database, audit, telemetry, service runtime and launcher."""
