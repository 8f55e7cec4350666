"""config.yaml at run time: watched, reloaded, edited over the API, applied without a restart.

Every new version of the file, whether an admin edited it on disk (the watcher polls its and the
secrets file's mtime, size and inode every `poll` seconds), asked for a reload
(`POST /api/config/reload`) or changed a section over the API, goes the same way:

1. it is validated with the models of start-up; an invalid version changes nothing, and its
   problems (with YAML paths) are logged, recorded and returned;
2. the keys that changed are sorted by the reload boundary (bot/config/boundary.py) and the
   live and channel ones applied (bot/config/apply.py); restart-only ones stay pending;
3. what changed, what was applied and what waits for a restart is logged and recorded
   (bot/config/changes.py).
One lock orders all of it: an edit never interleaves with a reload.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

import yaml
from ruamel.yaml.error import YAMLError

from bot.atomic_file import write_atomic
from bot.config.boundary import changed_keys, kind_of
from bot.config.changes import Change, ChangeLog, now
from bot.config.file import dump_doc, edit_section, load_doc, plain
from bot.config.schema import (
    ConfigError,
    Settings,
    config_env,
    read_yaml,
    settings_from_file,
    substitute,
)
from bot.config.secrets import read_secrets, read_secrets_text, secrets_path, write_secrets
from channels.tasks import cancel

log = logging.getLogger("bot.config")

POLL_SECONDS = 1.0


@dataclass
class Applied:
    """What the applier did with the live and channel keys of one change."""

    applied: list[str] = field(default_factory=list)
    channels_restarted: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


Apply = Callable[[Settings, Settings, list[str]], Awaitable[Applied]]


@dataclass(eq=False)
class LiveConfig:
    path: Path
    settings: Settings
    apply: Apply
    changes: ChangeLog
    _: KW_ONLY
    poll: float = POLL_SECONDS
    lock: asyncio.Lock = field(default_factory=asyncio.Lock, init=False)

    def __post_init__(self) -> None:
        self._data = self._substituted(read_yaml(self.path), config_env(self.path))
        self._boot = self._data  # restart-only keys are pending while they differ from this
        self._stamp = self._file_stamp()
        self._watcher: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ watching

    def start(self) -> None:
        self._watcher = asyncio.create_task(self._watch(), name="config-watch")

    async def stop(self) -> None:
        await cancel(self._watcher)
        self._watcher = None

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.poll)
            stamp = await asyncio.to_thread(self._file_stamp)
            if stamp != self._stamp:
                try:
                    await self.reload(source="file", who="file")
                except Exception:  # the watcher outlives any one bad reload
                    log.exception("config reload failed")

    def _file_stamp(self) -> tuple[Any, ...]:
        out: list[Any] = []
        for path in (self.path, secrets_path(self.path)):
            try:
                st = path.stat()
                out.append((st.st_mtime_ns, st.st_size, st.st_ino))
            except OSError:
                out.append(None)
        return tuple(out)

    # ------------------------------------------------------------------ reload and edit

    async def reload(self, *, source: str = "reload", who: str = "") -> Change:
        """Read the file again and apply what changed (nothing when it is invalid)."""
        async with self.lock:
            self._stamp = await asyncio.to_thread(self._file_stamp)
            try:
                raw = await asyncio.to_thread(read_yaml, self.path)
                env = config_env(self.path)
                settings = settings_from_file(self.path, raw, env)
            except ConfigError as exc:
                return await self._refused(source, who, exc.problems)
            return await self._adopt(self._substituted(raw, env), settings, source, who)

    async def edit(
        self, section: tuple[str, ...], body: Mapping[str, Any], *, replace: bool, who: str
    ) -> Change:
        """Write `body` into `section` of the file (validated first) and apply it.
        An invalid result writes nothing and changes nothing (`ok` is False)."""
        async with self.lock:
            try:
                doc = await asyncio.to_thread(self._load_doc)
            except ConfigError as exc:
                return await self._refused("api", who, exc.problems)
            edit = edit_section(doc, section, body, replace=replace)
            new_text = dump_doc(doc)
            raw = yaml.safe_load(new_text) or {}  # read back the way start-up reads it
            secrets_file = secrets_path(self.path)
            secrets = {**read_secrets(secrets_file), **edit.secrets}
            env = {**os.environ, **secrets}
            try:
                settings = settings_from_file(self.path, raw, env)
            except ConfigError as exc:
                return await self._refused("api", who, exc.problems)
            await asyncio.to_thread(self._write, new_text, secrets if edit.secrets else None)
            self._stamp = await asyncio.to_thread(self._file_stamp)
            return await self._adopt(self._substituted(raw, env), settings, "api", who)

    def _load_doc(self) -> Any:
        """The file as ruamel's round-trip document; ConfigError when it cannot be read."""
        read_yaml(self.path)  # the problems start-up would name (missing, not UTF-8, not YAML)
        try:
            return load_doc(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, YAMLError) as exc:  # changed in between
            raise ConfigError([f"{self.path}: cannot be edited ({exc})"]) from exc

    def _write(self, text: str, secrets: dict[str, str] | None) -> None:
        """The secrets file, then config.yaml; when config.yaml cannot be written (OSError),
        the secrets file is put back as it was, so the two never disagree."""
        secrets_file = secrets_path(self.path)
        before = secrets_file.read_bytes() if secrets_file.exists() else None
        if secrets is not None:
            write_secrets(secrets_file, secrets)
        try:
            write_atomic(self.path, text)
        except OSError:
            if secrets is not None and before is None:
                secrets_file.unlink(missing_ok=True)
            elif secrets is not None and before is not None:
                write_secrets(secrets_file, read_secrets_text(before))
            raise

    def pending_restart(self) -> list[str]:
        return [k for k in changed_keys(self._boot, self._data) if kind_of(k) == "restart"]

    # ------------------------------------------------------------------ internals

    async def _adopt(
        self, data: dict[str, Any], settings: Settings, source: str, who: str
    ) -> Change:
        changed = changed_keys(self._data, data)
        change = Change(at=now(), source=source, who=who, ok=True, changed=changed)
        if not changed:
            change.pending_restart = self.pending_restart()
            return change
        old, self.settings, self._data = self.settings, settings, data
        done = await self.apply(old, settings, [k for k in changed if kind_of(k) != "restart"])
        change.applied, change.errors = done.applied, done.errors
        change.channels_restarted = done.channels_restarted
        change.pending_restart = self.pending_restart()
        await self.changes.record(change)
        log.info(
            "config changed (%s): %s; applied: %s%s; waiting for a restart: %s",
            source,
            ", ".join(changed),
            ", ".join(done.applied) or "nothing",
            f" (channels restarted: {', '.join(done.channels_restarted)})"
            if done.channels_restarted
            else "",
            ", ".join(change.pending_restart) or "nothing",
        )
        for error in done.errors:
            log.warning("config change: %s", error)
        return change

    async def _refused(self, source: str, who: str, problems: list[str]) -> Change:
        for line in problems:
            log.error("config not applied: %s", line)
        change = Change(
            at=now(),
            source=source,
            who=who,
            ok=False,
            errors=problems,
            pending_restart=self.pending_restart(),
        )
        await self.changes.record(change)
        return change

    @staticmethod
    def _substituted(raw: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
        return substitute(plain(raw), env)
