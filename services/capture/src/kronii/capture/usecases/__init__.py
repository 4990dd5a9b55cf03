"""The capture service's use cases, one module each: take a request (`request_capture`), the live jobs
and every status change (`track_jobs`), the scheduler's rounds (`schedule_jobs`), one capture
(`run_capture`), the desktop as the sensor reports it (`follow_desktop`), the stored screenshots and
their retention (`serve_screenshots`), who is calling and may they (`guard_access`);
`operations.CaptureOperations` is the one front the API calls."""
