"""The supervisor's core: the trigger lifecycle of seed 002 as a data table, and its policies
(collision gate, guardrails, fallback choice, payload rules). No I/O; time is passed in."""
