"""The HTTP face: admin REST resources under api/, the LangGraph-compatible API under langgraph/,
the console, auth and the server. It may import `bot`; nothing imports it but the entry point."""
