"""Installing a `.skill` archive (a zip) into `skills/custom/<name>` without trusting it.

Every entry is checked before anything is written: no absolute paths or drive letters, no `..`,
no symlinks or other special files (the zip's `external_attr`), at most `MAX_ENTRIES` entries and
`MAX_UNPACKED` bytes unpacked (counted while extracting too, not only from the headers). The
archive holds `SKILL.md` at its top or inside one top-level folder. It is extracted into a
staging folder under the skills root (outside the category folders the loader reads), its
`SKILL.md` is parsed, and only then is the folder renamed into place; a refused archive leaves
nothing behind.
"""

from __future__ import annotations

import io
import re
import shutil
import stat
import uuid
import zipfile
from pathlib import Path, PurePosixPath

from agent.skills.loader import Skill, SkillError, parse_skill

MAX_ENTRIES = 200
MAX_UNPACKED = 10 * 1024 * 1024
MAX_ARCHIVE = 10 * 1024 * 1024
CHUNK = 64 * 1024
_DRIVE = re.compile(r"^[A-Za-z]:")


class ArchiveRefused(Exception):
    """The archive is not installable; the message says why."""


class SkillExists(Exception):
    pass


def entry_parts(name: str) -> tuple[str, ...]:
    """The entry's path parts, or ArchiveRefused for an absolute or escaping path."""
    text = name.replace("\\", "/")
    if text.startswith("/") or _DRIVE.match(text):
        raise ArchiveRefused(f"absolute path in archive: {name!r}")
    parts = tuple(p for p in PurePosixPath(text).parts if p not in ("", "."))
    if ".." in parts:
        raise ArchiveRefused(f"'..' in archive path: {name!r}")
    if any("\x00" in p for p in parts):
        raise ArchiveRefused(f"invalid archive path: {name!r}")
    return parts


def check_entries(infos: list[zipfile.ZipInfo]) -> None:
    if not infos:
        raise ArchiveRefused("the archive is empty")
    if len(infos) > MAX_ENTRIES:
        raise ArchiveRefused(f"the archive has more than {MAX_ENTRIES} entries")
    total = 0
    for info in infos:
        entry_parts(info.filename)
        mode = info.external_attr >> 16
        kind = stat.S_IFMT(mode)
        if kind == stat.S_IFLNK:
            raise ArchiveRefused(f"symlink in archive: {info.filename!r}")
        if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise ArchiveRefused(f"special file in archive: {info.filename!r}")
        total += info.file_size
        if total > MAX_UNPACKED:
            raise ArchiveRefused(f"the archive unpacks to more than {MAX_UNPACKED} bytes")


def skill_prefix(infos: list[zipfile.ZipInfo]) -> tuple[str, ...]:
    """() when SKILL.md is at the top, (folder,) when all of it sits in one top folder."""
    files = [entry_parts(i.filename) for i in infos if not i.is_dir()]
    if ("SKILL.md",) in files:
        return ()
    tops = {parts[0] for parts in files if parts}
    if len(tops) == 1:
        top = tops.pop()
        if (top, "SKILL.md") in files:
            return (top,)
    raise ArchiveRefused("the archive has no SKILL.md at its top or in one top-level folder")


def extract(archive: zipfile.ZipFile, dest: Path, prefix: tuple[str, ...]) -> None:
    budget = MAX_UNPACKED
    for info in archive.infolist():
        parts = entry_parts(info.filename)[len(prefix) :]
        if not parts:
            continue
        target = dest.joinpath(*parts)
        if info.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with archive.open(info) as src, target.open("xb") as out:
            while chunk := src.read(CHUNK):
                budget -= len(chunk)
                if budget < 0:
                    raise ArchiveRefused(f"the archive unpacks to more than {MAX_UNPACKED} bytes")
                out.write(chunk)


def install(data: bytes, root: Path, taken: set[str]) -> Skill:
    """Validate and install the archive under `root/custom`; return the installed skill.

    Raises ArchiveRefused (bad archive or SKILL.md) or SkillExists (`taken` or on disk)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError) as exc:
        raise ArchiveRefused(f"not a zip archive: {exc}") from None
    with archive:
        infos = archive.infolist()
        check_entries(infos)
        prefix = skill_prefix(infos)
        root.mkdir(parents=True, exist_ok=True)
        staging = root / f".staging-{uuid.uuid4().hex}"
        try:
            staged = staging / "skill"
            staged.mkdir(parents=True)
            try:
                extract(archive, staged, prefix)
            except (zipfile.BadZipFile, OSError, RuntimeError, EOFError) as exc:
                raise ArchiveRefused(f"could not unpack the archive: {exc}") from None
            return _place(staged, root, taken)
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def _place(staged: Path, root: Path, taken: set[str]) -> Skill:
    try:
        skill = parse_skill(staged / "SKILL.md", "custom")
    except (SkillError, OSError, UnicodeDecodeError) as exc:
        raise ArchiveRefused(f"invalid SKILL.md: {exc}") from None
    dest = root / "custom" / skill.name
    if skill.name in taken or dest.exists():
        raise SkillExists(skill.name)
    dest.parent.mkdir(parents=True, exist_ok=True)
    staged.rename(dest)
    return parse_skill(dest / "SKILL.md", "custom")
