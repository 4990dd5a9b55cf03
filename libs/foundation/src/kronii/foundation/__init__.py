"""kronii.foundation: what every part of kronii stands on: the error vocabulary, the clock, the audit port, settings and the config file, logs, telemetry, URLs."""
