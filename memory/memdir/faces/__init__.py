"""The faces memdir shows agents and people (CLI, hook, MCP server) and the views they report."""
