"""The critic's use cases, one module each; operations.CriticOperations is the facade api/ calls."""
