"""kronii.runtime: the service runtime: how every kronii service process is declared, built, made ready and run (alone or several in one process)."""
