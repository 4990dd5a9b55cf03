"""The pipeline's HTTP surface (triggers, state) and the conversion of bus messages to triggers."""
