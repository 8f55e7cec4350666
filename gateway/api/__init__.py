"""The admin REST API: one module per resource (`gateway/api/<resource>.py`)."""
