"""The built-in commands in the order `/help` and the platforms' menus show them: what the tests
expect, written once."""

BUILT_INS = (
    "new",
    "stop",
    "status",
    "models",
    "agent",
    "memory",
    "plan",
    "think",
    "schedule",
    "timezone",
    "link",
    "unlink",
    "usage",
    "lang",
    "help",
)
