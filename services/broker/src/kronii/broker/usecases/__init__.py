"""The broker's use cases, one per module; `operations.BrokerOperations` is the one facade the API calls."""
