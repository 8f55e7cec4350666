"""Configuration: the schema, the file on disk, live reload and what it may change at run time."""
