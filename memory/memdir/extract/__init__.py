"""Background extraction: a finished conversation turned into memories."""
