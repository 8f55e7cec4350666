"""LangGraph objects to JSON: messages as LangChain `model_dump()` dicts, states, checkpoints."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

HIDDEN_KEY_PREFIXES = ("__pregel", "branch:", "__start__", "__root__")


def jsonable(value: Any) -> Any:
    """Anything a graph emits, as plain JSON values."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    if isinstance(value, BaseModel):
        return jsonable(value.model_dump())
    if is_dataclass(value) and not isinstance(value, type):
        return jsonable(asdict(value))
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    return str(value)


def state_values(values: Any) -> dict[str, Any]:
    """A graph state for clients: internal channels dropped, messages as dicts."""
    if not isinstance(values, dict):
        return {}
    visible = {k: v for k, v in values.items() if not str(k).startswith(HIDDEN_KEY_PREFIXES)}
    out = jsonable(visible)
    return out if isinstance(out, dict) else {}


INTERRUPT = "__interrupt__"


def interrupts_json(items: Any) -> list[dict[str, Any]]:
    """LangGraph `Interrupt`s as clients see them: `{"value": ..., "id": ...}`."""
    return [
        {"value": jsonable(getattr(i, "value", None)), "id": str(getattr(i, "id", ""))}
        for i in items or ()
    ]


def interrupts_of(tup: Any) -> list[dict[str, Any]]:
    """The interrupts a checkpoint waits on (its pending `__interrupt__` writes)."""
    found: list[Any] = []
    for write in getattr(tup, "pending_writes", None) or ():
        if len(write) == 3 and write[1] == INTERRUPT:
            found.extend(write[2] if isinstance(write[2], list | tuple) else [write[2]])
    return interrupts_json(found)


def message_chunk(payload: Any) -> list[Any]:
    """A `messages` stream item `(chunk, metadata)` as the `[chunk_dict, metadata]` pair."""
    chunk, metadata = payload
    meta = {k: v for k, v in dict(metadata or {}).items() if not str(k).startswith("__")}
    return [jsonable(chunk), jsonable(meta)]


def iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat()


def checkpoint_ref(config: dict[str, Any] | None) -> dict[str, Any] | None:
    if not config:
        return None
    conf = config.get("configurable", {})
    return {
        "thread_id": conf.get("thread_id", ""),
        "checkpoint_ns": conf.get("checkpoint_ns", ""),
        "checkpoint_id": conf.get("checkpoint_id"),
    }


def state_from_checkpoint(
    thread_id: str, tup: Any, *, with_messages: bool = True
) -> dict[str, Any]:
    """A LangGraph `ThreadState` dict from a `CheckpointTuple` (or None: the empty state)."""
    if tup is None:
        return {
            "values": {},
            "next": [],
            "tasks": [],
            "metadata": {},
            "created_at": None,
            "checkpoint": {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": None},
            "parent_checkpoint": None,
            "checkpoint_id": None,
            "parent_checkpoint_id": None,
            "interrupts": [],
        }
    values = state_values(tup.checkpoint.get("channel_values", {}))
    if not with_messages:
        values = {k: v for k, v in values.items() if k != "messages"}
    current = checkpoint_ref(tup.config)
    parent = checkpoint_ref(tup.parent_config)
    interrupts = interrupts_of(tup)
    if interrupts:
        values[INTERRUPT] = interrupts
    return {
        "values": values,
        "next": [],
        "tasks": [],
        "metadata": jsonable(dict(tup.metadata or {})),
        "created_at": tup.checkpoint.get("ts"),
        "checkpoint": current,
        "parent_checkpoint": parent,
        "checkpoint_id": current["checkpoint_id"] if current else None,
        "parent_checkpoint_id": parent["checkpoint_id"] if parent else None,
        "interrupts": interrupts,
    }
