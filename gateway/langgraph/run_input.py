"""What an API run starts from: its messages and the checkpoint it continues.

Files the client attached to the last human message (`additional_kwargs.files`, DeerFlow's
`[{filename, size, path: /mnt/user-data/uploads/...}]`) reach the agent exactly as chat
uploads do: documents converted (and inlined when short), images shown to vision models.
A `checkpoint`/`checkpoint_id` naming the thread's head continues the thread as usual; an
older checkpoint of the thread forks from it (LangGraph's own semantics); any other is 404.
"""

from __future__ import annotations

from typing import Any

from agent.events import RunSettings, Turn
from agent.paths import VIRTUAL_ROOT
from agent.prompt import human_content, human_metadata
from agent.uploads import host_path, prepare_files
from gateway.errors import ApiError
from gateway.langgraph.run_schemas import RunCreate
from gateway.service import CALLER_PERSON, Gateway

UPLOADS = VIRTUAL_ROOT + "/uploads/"


def convert(raw: list[Any]) -> list[Any]:
    """The request's messages as LangChain messages (422 when they are not messages)."""
    from langchain_core.messages import convert_to_messages

    try:
        return list(convert_to_messages(raw))
    except (ValueError, TypeError, NotImplementedError, KeyError) as exc:
        raise ApiError(
            422,
            [
                {
                    "loc": ["body", "input", "messages"],
                    "type": "value_error",
                    "msg": f"not a list of chat messages: {exc}",
                }
            ],
        ) from None


async def with_files(
    gw: Gateway, thread_id: str, messages: list[Any], settings: RunSettings
) -> list[Any]:
    """`messages` with the last human message's attached files prepared for the agent."""
    from langchain_core.messages import HumanMessage

    index = next(
        (i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], HumanMessage)), None
    )
    if index is None:
        return messages
    human = messages[index]
    paths = attached_paths(gw, thread_id, human.additional_kwargs.get("files"))
    if not paths:
        return messages
    model = gw.service.runner.resolve_model(settings.model)
    dirs = gw.service.runner.thread_dirs(thread_id)
    files = await prepare_files(
        paths, dirs, gw.service.agent_config().uploads, vision=model.supports_vision
    )
    turn = Turn(text=text_of(human.content), user_id=CALLER_PERSON, files=tuple(paths))
    meta = human_metadata(turn)
    if files.images:
        meta["images"] = list(files.images)
    kwargs = {**human.additional_kwargs, "antler": meta}
    prepared = HumanMessage(
        content=human_content(turn, files.block), id=human.id, additional_kwargs=kwargs
    )
    return [*messages[:index], prepared, *messages[index + 1 :]]


def attached_paths(gw: Gateway, thread_id: str, files: Any) -> list[str]:
    """The agent paths of `additional_kwargs.files`; 422 for a file not in the thread's uploads."""
    if files is None:
        return []
    if not isinstance(files, list):
        raise _bad_files("additional_kwargs.files must be a list of {filename, path}")
    dirs = gw.service.runner.thread_dirs(thread_id)
    out: list[str] = []
    for item in files:
        path = _agent_path(item)
        host = host_path(path, dirs) if path else None
        if path is None or host is None or host.parent != dirs.uploads.resolve():
            raise _bad_files(f"attached file {item!r} is not in {UPLOADS}")
        if not host.is_file():
            raise _bad_files(f"{path} was not uploaded to thread {thread_id}; upload it first")
        if path not in out:
            out.append(path)
    return out


def _agent_path(item: Any) -> str | None:
    if isinstance(item, str):
        item = {"path": item}
    if not isinstance(item, dict):
        return None
    path, name = item.get("path"), item.get("filename")
    if isinstance(path, str) and path:
        return path if path.startswith("/") else "/" + path
    if isinstance(name, str) and name and "/" not in name and "\\" not in name:
        return UPLOADS + name
    return None


def _bad_files(msg: str) -> ApiError:
    return ApiError(
        422,
        [
            {
                "loc": ["body", "input", "messages", "additional_kwargs", "files"],
                "type": "value_error",
                "msg": msg,
            }
        ],
    )


def text_of(content: Any) -> str:
    """A message's text, whether a string or a list of content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            b if isinstance(b, str) else b.get("text", "")
            for b in content
            if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")
        ]
        return "\n".join(p for p in parts if p)
    return str(content)


async def fork_point(gw: Gateway, thread_id: str, body: RunCreate) -> str | None:
    """The checkpoint to fork from, or None to continue the thread's head."""
    checkpoint_id = body.checkpoint_id
    if body.checkpoint:
        named = body.checkpoint.get("thread_id")
        if named is not None and str(named) != thread_id:
            raise ApiError(400, "checkpoint thread_id does not match the run's thread")
        if body.checkpoint.get("checkpoint_ns"):
            raise ApiError(
                400, "checkpoint_ns must be empty (subgraph checkpoints are not addressable)"
            )
        checkpoint_id = body.checkpoint.get("checkpoint_id") or checkpoint_id
    if not checkpoint_id:
        return None
    checkpoint_id = str(checkpoint_id)
    head = await gw.service.runner.checkpoint(thread_id)
    if head is not None and head.config["configurable"].get("checkpoint_id") == checkpoint_id:
        return None
    if await gw.service.runner.checkpoint(thread_id, checkpoint_id) is None:
        raise ApiError(404, f"checkpoint {checkpoint_id} not found in thread {thread_id}")
    return checkpoint_id
