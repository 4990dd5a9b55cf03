"""`kronii vision`: the vision engine's commands (only click and the standard library load here)."""
