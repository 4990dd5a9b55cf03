"""The supervisor's use cases, one module each; operations.py is the one facade the API calls."""
