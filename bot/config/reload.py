"""The reload boundary markers of the configuration's fields (bot/config/boundary.py)."""

from __future__ import annotations

from typing import Any

# The reload boundary, declared on each field (bot/config/boundary.py reads it): `live` applies
# to the next turn or message, `channel` restarts only that channel, `restart` waits for a
# restart of the service. A field without a marker inherits its section's.
LIVE: dict[str, Any] = {"reload": "live"}
CHANNEL: dict[str, Any] = {"reload": "channel"}
RESTART: dict[str, Any] = {"reload": "restart"}
