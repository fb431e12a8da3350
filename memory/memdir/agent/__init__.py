"""The memory directory as the agent reads it: where it is, its files, the index, the scan."""
