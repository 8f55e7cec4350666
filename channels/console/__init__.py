"""The terminal channel behind `antler chat`."""
