"""kronii pipeline: the orchestrator from activity to suggestions worth the user's attention."""
