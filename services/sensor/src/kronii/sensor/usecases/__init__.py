"""The sensor's use cases, one module each: take an input into the state machine (`take_activity`),
publish what it decided (`publish_activity`), write envelopes and audit rows off the event path
(`record_activity`), keep and answer the snapshot (`keep_snapshot`), stream events to watchers
(`watch_activity`), and follow the display (`watch_display`); `operations.SensorOperations` is the
one front the API calls."""
