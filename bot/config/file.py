"""Editing config.yaml for the admin API: comments and key order kept (ruamel.yaml round trip).

An edit replaces (PUT) or merges into (PATCH) one section of the document. On the way in:
- a value sent back as the mask (`***`) keeps what the file holds (a `$VAR` or a literal);
- a new secret (a `SecretStr` field, or a free-form key named like one: `api_key`, `token`)
  never lands in config.yaml: it goes to the secrets file (bot/config/secrets.py) under the name
  the key already referred to (`$TELEGRAM_BOT_TOKEN`), or a new `ANTLER_...` name, and the key
  holds `$NAME`;
- a `$VAR` reference sent as such is written as it is.
The caller validates the edited document with the same models as the file before writing it.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, get_args, get_origin

from pydantic import BaseModel, SecretStr
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from bot.config.boundary import model_of
from bot.config.env import var_reference
from bot.config.schema import Settings, channels_model
from bot.config.secrets import variable_for

MASK = "***"
_SECRETISH = re.compile(r"api[_-]?key|token|secret|password|passwd|credential|dsn", re.I)
_PYDANTIC_MASK = "**********"
Part = str | int


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap a long line
    yaml.indent(mapping=2, sequence=4, offset=2)  # the style of config.example.yaml
    return yaml


def load_doc(text: str) -> CommentedMap:
    doc = _yaml().load(text) if text.strip() else None
    return doc if isinstance(doc, CommentedMap) else CommentedMap()


def dump_doc(doc: CommentedMap) -> str:
    out = io.StringIO()
    _yaml().dump(doc, out)
    return out.getvalue()


def plain(node: Any) -> Any:
    """The document as plain dicts, lists and scalars (what `yaml.safe_load` would give)."""
    if isinstance(node, dict):
        return {str(k): plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [plain(v) for v in node]
    for kind in (bool, int, float, str):
        if isinstance(node, kind):
            return kind(node)
    return node


@dataclass
class Edit:
    """One edit's side results: new secrets for the secrets file, the keys it touched."""

    secrets: dict[str, str] = field(default_factory=dict)


def edit_section(
    doc: CommentedMap, section: tuple[str, ...], body: Mapping[str, Any], *, replace: bool
) -> Edit:
    """Write `body` into `doc` at `section` (created when missing)."""
    edit = Edit()
    if not section:  # top-level keys (`models` and `default_model`)
        _merge(doc, body, [], edit, replace)
        return edit
    node = doc
    for i, key in enumerate(section):
        child = node.get(key)
        if not isinstance(child, CommentedMap):
            child = CommentedMap()
            node[key] = child
        node = child
        if i == len(section) - 1:
            _merge(node, body, list(section), edit, replace)
    return edit


def _merge(
    node: CommentedMap, body: Mapping[str, Any], parts: list[Part], edit: Edit, replace: bool
) -> None:
    if replace:
        for key in [k for k in node if k not in body]:
            del node[key]
    for key, value in body.items():
        here = [*parts, key]
        old = node.get(key)
        if isinstance(value, dict) and isinstance(old, CommentedMap):
            _merge(old, value, here, edit, replace)
        elif isinstance(value, dict):
            fresh = CommentedMap()
            _merge(fresh, value, here, edit, True)
            node[key] = fresh
        elif isinstance(value, list):
            node[key] = _list(old, value, here, edit)
        elif value == MASK:
            if key not in node:  # nothing stored to keep: leave the key out
                continue
        else:
            node[key] = _scalar(old, value, here, edit)


def _list(old: Any, items: list[Any], parts: list[Part], edit: Edit) -> CommentedSeq:
    olds = list(old) if isinstance(old, list) else []
    by_name = {o.get("name"): o for o in olds if isinstance(o, CommentedMap) and o.get("name")}
    out: list[Any] = []
    for i, item in enumerate(items):
        here = [*parts, i]
        if isinstance(item, dict):
            match = by_name.get(item.get("name")) if item.get("name") else None
            if match is None and not by_name and i < len(olds):
                match = olds[i] if isinstance(olds[i], CommentedMap) else None
            target = match if match is not None else CommentedMap()
            _merge(target, item, here, edit, True)
            out.append(target)
        else:
            out.append(_scalar(olds[i] if i < len(olds) else None, item, here, edit))
    seq = old if isinstance(old, CommentedSeq) else CommentedSeq()
    del seq[:]
    seq.extend(out)
    return seq


def _scalar(old: Any, value: Any, parts: list[Part], edit: Edit) -> Any:
    if value == MASK and old is not None:
        return old
    if not (isinstance(value, str) and value and is_secret(parts)) or var_reference(value):
        return value
    name = var_reference(old) or variable_for(yaml_path(parts))
    edit.secrets[name] = value
    return f"${name}"


def yaml_path(parts: list[Part]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def is_secret(parts: list[Part]) -> bool:
    """A `SecretStr` field of the schema, or a free-form key named like a secret."""
    model: type[BaseModel] | None = Settings
    annotation: Any = None
    for part in parts:
        if isinstance(part, int):  # an item of a list of models (`models[1]`, `agent.tools[0]`)
            model = list_item_model(annotation)
            continue
        if model is Settings and part == "channels":
            model, annotation = channels_model(), None
            continue
        if model is None or part not in model.model_fields:
            return bool(_SECRETISH.search(str(part)))
        annotation = model.model_fields[part].annotation
        model = model_of(annotation)
    return _has_secret(annotation)


def list_item_model(annotation: Any) -> type[BaseModel] | None:
    """`M` for a field typed `list[M]` (M a model), else None."""
    if get_origin(annotation) is list:
        (item,) = get_args(annotation) or (None,)
        return item if isinstance(item, type) and issubclass(item, BaseModel) else None
    return None


def _has_secret(annotation: Any) -> bool:
    return annotation is SecretStr or SecretStr in get_args(annotation)


def masked(value: Any, key: str = "") -> Any:
    """A JSON dump of the settings with every secret shown as `***` ("" / null stay as they
    are, so a client sees which secrets are set)."""
    if isinstance(value, dict):
        return {k: masked(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v, key) for v in value]
    if value == _PYDANTIC_MASK or (value and isinstance(value, str) and _SECRETISH.search(key)):
        return MASK
    return value
