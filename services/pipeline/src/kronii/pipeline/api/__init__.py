"""The pipeline's HTTP surface (triggers and state, runs, plugins, snooze/disable controls, the
notification stream) and the conversion of bus messages to triggers. These modules only translate:
they reach the stores through `kronii.pipeline.ports`, never an adapter."""
