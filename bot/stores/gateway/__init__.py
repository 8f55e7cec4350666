"""The Gateway's own records (threads and runs created over the API): the interface with its
SQLite backend (records.py) and the PostgreSQL one (postgres.py)."""
