"""What the agent gets from a message: its files fetched into the thread's uploads (within the
platform's, the service's and the sender's role's limits) and the `Turn` it runs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from agent.events import Turn
from agent.grant import Grant
from bot import texts
from bot.access.people import account_of
from bot.speech import Speech, shown_back
from channels.base import Channel, ChannelError, FileTooLarge, InboundMessage

if TYPE_CHECKING:
    from bot.replies import ReplyStreamer

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


async def with_inputs(
    streamer: ReplyStreamer, turn: Turn, uploads: Path, limit: int, speech: Speech
) -> Turn:
    """`turn` with the message's files fetched into `uploads` and its voice notes heard (their
    transcript shown back and added to the text); notes in the reply say what was not."""
    channel, msg = streamer.channel, streamer.msg
    others = tuple(a for a in msg.attachments if not speech.heard(a))
    files, notes = await fetch_files(
        channel, replace(msg, attachments=others), uploads, limit, turn.grant
    )
    heard, more = await speech.hear(channel, msg, uploads, limit)  # bot/speech.py
    for note in (*notes, *more):
        await streamer.say(note)
    if heard:
        streamer.lead_with(shown_back(heard))
        turn = replace(turn, text="\n\n".join(t for t in (turn.text, *heard) if t))
    return replace(turn, files=tuple(files))
