"""A real MCP server (the `mcp` package's FastMCP) for tests: `add`, `shout` and `whoami`.

Run as a script for stdio (`python tests/fakes/mcp_server.py`); tests start the streamable
HTTP variant in a thread with `HttpMcpServer`. Imports nothing from the project.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time

from mcp.server.fastmcp import FastMCP


def build() -> FastMCP:
    server = FastMCP("antler-test", host="127.0.0.1")

    @server.tool()
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return f"sum={a + b}"

    @server.tool()
    def shout(text: str) -> str:
        """Upper-case a text."""
        return text.upper()

    @server.tool()
    def whoami() -> str:
        """The MCP_TEST_USER environment variable of the server process."""
        return f"user={os.environ.get('MCP_TEST_USER', '')}"

    return server


class HttpMcpServer:
    """Streamable HTTP on 127.0.0.1 (ephemeral port), served by uvicorn on its own thread."""

    def __init__(self) -> None:
        import uvicorn

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        app = build().streamable_http_app()
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> HttpMcpServer:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("MCP HTTP server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(5)
        self.sock.close()


if __name__ == "__main__":
    build().run("stdio")
    sys.exit(0)
