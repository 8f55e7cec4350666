"""The `antler` command: serve, chat, check, --version."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import socket
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING

from bot.config.schema import ConfigError, Settings, load_settings, path_warnings
from bot.logs import LEVELS, route_sdk_loggers, secrets_of, setup_logging
from bot.runtime import freeze_startup_objects, run, tune_gc

if TYPE_CHECKING:
    from bot.app import App, FrontFactory

# The agent stack (bot.app, agent.runner) is imported only once the config is valid: a command
# that stops at a config error answers without paying for LangChain's import.

log = logging.getLogger("antler")

EXIT_CONFIG = 2


def main(argv: list[str] | None = None, front: FrontFactory | None = None) -> int:
    """The `antler` command; `front` is the HTTP face `serve` puts on the service (the entry
    point in gateway/__main__.py passes it: bot never imports gateway)."""
    args = _parser().parse_args(argv)
    if args.version:
        print(f"antler {_version()}")
        return 0
    if not args.command:
        _parser().print_help()
        return EXIT_CONFIG
    try:
        settings = _load(args.config, args.command)
        warnings = _preflight(settings, check_port=args.command == "check")
    except ConfigError as exc:
        for line in exc.problems:
            print(f"config error: {line}", file=sys.stderr)
        return EXIT_CONFIG
    level = args.log_level or ("warning" if args.command == "chat" else settings.logging.level)
    setup_logging(level, secrets_of(settings), tracebacks=args.command != "chat")
    try:
        if args.command == "check":
            return _check(settings, warnings)
        tune_gc()
        if args.command == "chat":
            return run(_chat(settings, warnings))
        return run(_serve(settings, warnings, front))
    except ConfigError as exc:  # e.g. the database in storage.postgres.dsn cannot be used
        for line in exc.problems:
            print(f"config error: {line}", file=sys.stderr)
        return EXIT_CONFIG


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="antler", description="An AI agent in your messenger.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command")
    for name, text in (
        ("serve", "run all enabled channels and the admin server"),
        ("chat", "talk to the agent in this terminal"),
        ("check", "validate the configuration and show what would start"),
    ):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("--config", type=Path, default=Path("config.yaml"))
        cmd.add_argument(
            "--log-level",
            choices=LEVELS,
            default=None,
            help="override logging.level (serve default: info; chat: warning)",
        )
    return parser


def _load(path: Path, command: str) -> Settings:
    if command == "chat" and not path.exists():
        raise ConfigError(
            [
                f"{path}: file not found; `antler chat` needs a model: copy "
                "config.example.yaml to config.yaml and fill in models[]"
            ]
        )
    return load_settings(path)


def _preflight(settings: Settings, *, check_port: bool) -> list[str]:
    """What serve would refuse, as ConfigError; what it would only warn about, as lines."""
    from agent.runner import AgentRunner

    try:
        runner = AgentRunner(
            models=settings.models,
            default_model=settings.default_model,
            config=settings.agent,
            data_dir=settings.storage.data_dir,
        )
    except ValueError as exc:
        raise ConfigError([f"models: {exc}"]) from exc
    gw = settings.gateway
    if check_port and gw.enabled and gw.port and not port_free(gw.host, gw.port):
        raise ConfigError([port_taken(gw.host, gw.port)])
    from agent.sandbox.provider import preflight as sandbox_preflight
    from bot.access.check import access_warnings

    _line, problems, sandbox_warnings = sandbox_preflight(settings.agent.sandbox)
    if problems:
        raise ConfigError(problems)
    return (
        runner.model_warnings()
        + path_warnings(settings)
        + sandbox_warnings
        + access_warnings(settings)
    )


def port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def port_taken(host: str, port: int) -> str:
    return (
        f"gateway.port: {port} on {host} is already in use (another Antler, or DeerFlow, "
        "which uses 8001 too); set gateway.port to a free port"
    )


def _check(settings: Settings, warnings: list[str]) -> int:
    from bot.stores.build import try_storage

    print(f"config ok: {settings.config_path}")
    print(f"data dir: {settings.storage.data_dir}")
    print(f"storage: {asyncio.run(try_storage(settings))}")
    gw = settings.gateway
    print(f"admin server: http://{gw.host}:{gw.port}" if gw.enabled else "admin server: disabled")
    for model in settings.models:
        print(f"model: {model.name} ({model.model})")
    from agent.sandbox.provider import preflight as sandbox_preflight

    print(f"sandbox: {sandbox_preflight(settings.agent.sandbox)[0]}")
    for warning in warnings:
        print(f"warning: {warning}")
    enabled = settings.channels.enabled()
    print("channels: " + (", ".join(enabled) if enabled else "none enabled"))
    return 0


async def _serve(settings: Settings, warnings: list[str], front: FrontFactory | None) -> int:
    from bot.app import App

    for warning in warnings:
        log.warning("%s", warning)
    app = App(settings, front=front)
    route_sdk_loggers()
    stop = _stop_event()
    try:
        await _start(app)
    except OSError as exc:
        gw = settings.gateway
        if app.gateway is None or app.gateway.port != gw.port or "address" not in str(exc):
            raise
        print(f"config error: {port_taken(gw.host, gw.port)}", file=sys.stderr)
        await app.stop()
        return EXIT_CONFIG
    freeze_startup_objects()
    for name, ctx in app.contexts.items():
        state = "running" if ctx.state.running else f"NOT running ({ctx.state.last_error})"
        log.info("channel %-9s %s", name, state)
    if not app.channels:
        log.info("no channel enabled: the admin server runs; try `antler chat`")
    await stop.wait()
    log.info("stopping: letting running replies finish")
    await app.stop()
    return 0


async def _chat(settings: Settings, warnings: list[str]) -> int:
    from bot.app import App

    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    app = App(settings, only=["console"])
    route_sdk_loggers()
    stop = _stop_event()
    await _start(app, gateway=False)
    channel = app.channels["console"]
    finished = asyncio.create_task(channel.finished.wait())  # type: ignore[attr-defined]
    stopped = asyncio.create_task(stop.wait())
    await asyncio.wait({finished, stopped}, return_when=asyncio.FIRST_COMPLETED)
    if finished.done():
        await _wait_until_answered(app)
    stopped.cancel()
    await app.stop()
    return 0


async def _start(app: App, *, gateway: bool = True) -> None:
    try:
        await app.start(gateway=gateway)
    except ConfigError:  # the stores open first: nothing else has started yet
        await app.stores.close()
        raise


async def _wait_until_answered(app: App) -> None:
    while app.bus.depth or not await app.dispatcher.wait_idle(0.05):
        await asyncio.sleep(0.02)


def _stop_event() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
    return stop


def _version() -> str:
    try:
        return version("antler")
    except PackageNotFoundError:
        return "0.0.0+local"
