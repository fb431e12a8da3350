"""Glob and grep over a memory dir, a user's regular expression bounded in a child process."""
