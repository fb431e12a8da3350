"""memdir: a faithful model of agent memory directories."""

__version__ = "0.1.0"
