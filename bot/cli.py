"""The `antler` command: serve, chat, check, --version."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from bot.app import App
from bot.config import ConfigError, Settings, load_settings, settings_from_dict

log = logging.getLogger("antler")

EXIT_CONFIG = 2


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.version:
        print(f"antler {_version()}")
        return 0
    if not args.command:
        _parser().print_help()
        return EXIT_CONFIG
    logging.basicConfig(level=logging.INFO if args.command == "serve" else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        settings = _load(args.config, args.command)
    except ConfigError as exc:
        for line in exc.problems:
            print(f"config error: {line}", file=sys.stderr)
        return EXIT_CONFIG
    if args.command == "check":
        return _check(settings)
    if args.command == "chat":
        return asyncio.run(_chat(settings))
    return asyncio.run(_serve(settings))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="antler", description="An AI agent in your messenger.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command")
    for name, text in (("serve", "run all enabled channels and the admin server"),
                       ("chat", "talk to the agent in this terminal"),
                       ("check", "validate the configuration and show what would start")):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("--config", type=Path, default=Path("config.yaml"))
    return parser


def _load(path: Path, command: str) -> Settings:
    if command == "chat" and not path.exists():
        return settings_from_dict({})
    return load_settings(path)


def _check(settings: Settings) -> int:
    print(f"config ok: {settings.config_path}")
    print(f"data dir: {settings.storage.data_dir}")
    gw = settings.gateway
    print(f"admin server: http://{gw.host}:{gw.port}" if gw.enabled else "admin server: disabled")
    for model in settings.models:
        print(f"model: {model.name} ({model.model})")
    for warning in _model_warnings(settings):
        print(f"warning: {warning}")
    enabled = settings.channels.enabled()
    print("channels: " + (", ".join(enabled) if enabled else "none enabled"))
    return 0


def _model_warnings(settings: Settings) -> list[str]:
    from agent.runner import AgentRunner

    runner = AgentRunner(models=settings.models, default_model=settings.default_model,
                         config=settings.agent, data_dir=settings.storage.data_dir)
    return runner.model_warnings()


async def _serve(settings: Settings) -> int:
    for warning in _model_warnings(settings):
        log.warning("%s", warning)
    app = App(settings)
    stop = _stop_event()
    await app.start()
    for name, ctx in app.contexts.items():
        state = "running" if ctx.state.running else f"NOT running ({ctx.state.last_error})"
        log.info("channel %-9s %s", name, state)
    if not app.channels:
        log.info("no channel enabled: the admin server runs; try `antler chat`")
    await stop.wait()
    log.info("stopping: letting running replies finish")
    await app.stop()
    return 0


async def _chat(settings: Settings) -> int:
    for warning in _model_warnings(settings):
        print(f"warning: {warning}", file=sys.stderr)
    app = App(settings, only=["console"])
    stop = _stop_event()
    await app.start(gateway=False)
    channel = app.channels["console"]
    finished = asyncio.create_task(channel.finished.wait())  # type: ignore[attr-defined]
    stopped = asyncio.create_task(stop.wait())
    await asyncio.wait({finished, stopped}, return_when=asyncio.FIRST_COMPLETED)
    if finished.done():
        await _wait_until_answered(app)
    stopped.cancel()
    await app.stop()
    return 0


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


if __name__ == "__main__":
    sys.exit(main())
