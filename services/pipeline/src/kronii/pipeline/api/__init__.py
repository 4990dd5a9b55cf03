"""The pipeline's edge: the HTTP routes (triggers and state, runs, plugins, snooze/disable
controls, the notification stream), the NATS handlers (`bus`) and the conversion of wire to core
and back (`convert`). These modules only translate: they call `PipelineOperations`, never an
adapter."""
