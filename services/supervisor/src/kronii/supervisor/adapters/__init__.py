"""The supervisor's adapters: tmux (control mode), processes (resume, spawn), Redis, PostgreSQL."""
