"""The LangGraph-compatible API (`/api/threads`, runs, assistants) for langgraph-sdk clients and
DeerFlow's web UI."""
