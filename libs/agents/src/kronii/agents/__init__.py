"""kronii.agents: what an agent process uses to reach kronii: the input broker's client and the agent's key."""
