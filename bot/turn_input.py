"""What the agent gets from a message: its files fetched into the thread's uploads (within the
platform's, the service's and the sender's role's limits) and the `Turn` it runs."""

from __future__ import annotations

from pathlib import Path

from agent.events import Turn
from agent.grant import Grant
from bot import texts
from bot.access.people import account_of
from channels.base import Channel, ChannelError, FileTooLarge, InboundMessage

AGENT_UPLOADS = "/mnt/user-data/uploads"


async def fetch_files(
    channel: Channel, msg: InboundMessage, uploads: Path, limit: int, grant: Grant | None
) -> tuple[list[str], list[str]]:
    """The files as the agent sees them, and a note for each one not read."""
    role_limit = grant.upload_bytes if grant is not None else None
    limit = min(limit, role_limit) if role_limit is not None else limit
    files, notes = [], []
    for att in msg.attachments:
        try:
            if att.size is not None and att.size > limit:
                raise FileTooLarge(att.name, att.size, limit)
            path = await channel.fetch_file(msg, att, uploads, limit=limit)
            files.append(_agent_path(path, uploads))
        except FileTooLarge as exc:
            notes.append(texts.file_not_read(att.name, exc))
        except ChannelError as exc:
            notes.append(texts.file_not_downloaded(att.name, exc))
    return files, notes


def message_turn(
    msg: InboundMessage,
    files: list[str],
    grant: Grant | None,
    text: str | None = None,
    skill: str | None = None,
) -> Turn:
    return Turn(
        chat=msg.chat.key,
        grant=grant,
        text=msg.text if text is None else text,
        skill=skill,
        user_id=account_of(msg),  # the platform's account, whichever of its bots
        user_name=msg.sender.name,
        files=tuple(files),
        context=msg.quoted_text or "",
        chat_type=msg.chat.chat_type,
    )


def _agent_path(path: Path, uploads: Path) -> str:
    try:
        return f"{AGENT_UPLOADS}/{path.relative_to(uploads).as_posix()}"
    except ValueError:
        return str(path)
