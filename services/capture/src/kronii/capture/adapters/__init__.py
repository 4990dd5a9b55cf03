"""The capture service's adapters: the screen, the matcher's feed, the job store, the vault, access."""
