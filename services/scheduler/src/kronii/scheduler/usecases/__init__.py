"""The scheduler's use cases, one module each: apply a Planner's plan (`submit_plan`), answer an
admission (`admit_run`), show the schedule (`show_schedule`), fire the due wake-ups (`fire_wakeups`),
with the audit rows written off the request path (`audit_later`); `operations.SchedulerOperations`
is the one front the API calls."""
