"""Uploaded files as the model sees them.

PDF, Word, Excel and PowerPoint files are converted to markdown (markitdown) next to the
original (`report.pdf` → `report.pdf.md`); short ones are inlined in the message. Images are
marked for the `VisionImages` middleware when the model supports vision; otherwise the model
is told it cannot see them.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.config_context import UploadsConfig
from agent.paths import VIRTUAL_ROOT, ThreadDirs

log = logging.getLogger(__name__)

DOCUMENT_SUFFIXES = frozenset({".pdf", ".docx", ".xlsx", ".xls", ".pptx"})
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
UPLOADED = (
    "New files uploaded with this message (in /mnt/user-data/uploads; read them with read_file):"
)
NO_VISION = "an image; the current model cannot see images, so say so if asked about it"
TAG = "uploaded_files"  # DeerFlow's tag: its web UI hides the note and shows file chips


def tagged(block: str) -> str:
    """The note in `<uploaded_files>` tags (an inlined document cannot close them early)."""
    close = f"</{TAG}>"
    return f"<{TAG}>\n{block.replace(close, f'&lt;/{TAG}>')}\n{close}"


@dataclass(frozen=True, slots=True)
class PreparedFiles:
    """The uploaded-files block of the message (in `<uploaded_files>` tags) and the images
    to show a vision model."""

    block: str = ""
    images: tuple[str, ...] = field(default_factory=tuple)


def host_path(agent_path: str, dirs: ThreadDirs) -> Path | None:
    """`/mnt/user-data/uploads/a.pdf` → the host file, or None when outside the thread."""
    prefix = VIRTUAL_ROOT + "/"
    if not agent_path.startswith(prefix):
        return None
    rest = agent_path[len(prefix) :]
    path = (dirs.root / rest).resolve()
    return path if path.is_relative_to(dirs.root.resolve()) else None


def markdown_path(source: Path) -> Path:
    """`report.pdf` → `report.pdf.md` (never collides with an uploaded `report.md`)."""
    return source.with_name(source.name + ".md")


def image_type(path: str) -> str | None:
    return IMAGE_TYPES.get(Path(path).suffix.lower())


async def prepare_files(
    files: Sequence[str], dirs: ThreadDirs, config: UploadsConfig, *, vision: bool
) -> PreparedFiles:
    if not files:
        return PreparedFiles()
    lines, inlined, images = [UPLOADED], list[str](), list[str]()
    for path in files:
        note, content = "", ""
        host = host_path(path, dirs)
        if image_type(path):
            if vision and len(images) < config.max_images and _small(host, config):
                images.append(path)
                note = "an image, shown to you below"
            else:
                note = NO_VISION if not vision else "an image too large to show you"
        elif host is not None and host.suffix.lower() in DOCUMENT_SUFFIXES:
            note, content = await _document(host, path, config)
        lines.append(f"- {path}" + (f" ({note})" if note else ""))
        if content:
            inlined.append(f"Content of {Path(path).name}:\n<document>\n{content}\n</document>")
    return PreparedFiles(tagged("\n\n".join(["\n".join(lines), *inlined])), tuple(images))


def _small(host: Path | None, config: UploadsConfig) -> bool:
    return host is not None and host.is_file() and host.stat().st_size <= config.max_image_bytes


async def _document(host: Path, agent_path: str, config: UploadsConfig) -> tuple[str, str]:
    """(note, inline content) for a document, converting it on first sight."""
    if not config.convert_documents or not host.is_file():
        return "", ""
    try:
        md = await asyncio.to_thread(convert_to_markdown, host)
    except Exception as exc:
        log.warning("could not convert %s to markdown: %s", host.name, exc)
        return "could not be converted to text", ""
    md_agent = agent_path.rsplit("/", 1)[0] + "/" + md.name
    text = md.read_text(encoding="utf-8", errors="replace").strip()
    if text and len(text) <= config.inline_markdown_chars:
        return f"converted to markdown: {md_agent}; its content is below", text
    return f"converted to markdown: {md_agent}; read that file", ""


def convert_to_markdown(source: Path) -> Path:
    """Write `source` as markdown next to it (atomically) and return the markdown's path."""
    dest = markdown_path(source)
    if dest.exists() and dest.stat().st_mtime >= source.stat().st_mtime:
        return dest
    result = _converter().convert(str(source))
    tmp = dest.with_name(dest.name + ".tmp")
    tmp.write_text(result.text_content or "", encoding="utf-8")
    tmp.replace(dest)
    return dest


@functools.cache
def _converter() -> Any:
    from markitdown import MarkItDown

    return MarkItDown(enable_plugins=False)
