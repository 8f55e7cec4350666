"""`antler` and `python -m gateway`: the service with its HTTP face.

The entry point joins the two: `bot.cli` runs the service and never imports `gateway`; this
module hands it `gateway.server.serve` as the front `antler serve` puts on the App.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from bot.cli import main as cli_main
    from gateway.server import serve

    return cli_main(argv, front=serve)


if __name__ == "__main__":
    sys.exit(main())
