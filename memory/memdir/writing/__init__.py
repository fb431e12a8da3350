"""Every change to a memory directory: the one writer, and the memory tool over it."""
