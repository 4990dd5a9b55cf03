"""kronii supervisor: wakes live agents in their tmux panes, never over a typing human, and falls
back to `resume` or a fresh session when the live process cannot be reached (seed 002)."""
