"""Path B: choosing the memories relevant to a message, and surfacing them."""
