"""The pipeline's use cases, one module each: triggers in (`take_trigger`), a round's states
(`run_round`, `await_capture`, `call_role`, `deliver_round`) around the runner's standing
(`round_state`, `runner`), the run loop (`run_loop`), notices from other services (`show_notice`),
a recording replayed in this process (`replay_recording`); `operations.PipelineOperations` is the
one front the API calls."""
