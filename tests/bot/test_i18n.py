"""The catalogs are complete: every text the code marks has a translation in every language,
with the same placeholders; nothing in bot/texts/ escapes translation; every text renders in
every language; the language of a message follows the person, the platform, the channel."""

from __future__ import annotations

import ast
import inspect
import re
import string
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

from bot import i18n, texts
from bot.config.schema import ConfigError, settings_from_dict
from bot.schedules.recurrence import local_text

ROOT = Path(__file__).resolve().parents[2]
KEYWORDS = {"N_": None, "_": None, "gettext": None, "register": (2,)}
"""What `make messages` extracts (its `-k` flags; test_the_makefile_extracts_the_same_keywords)."""
MARKERS = {"_", "N_", "gettext"}
PERCENT = re.compile(r"%\((\w+)\)([sd])")
TRANSLATED = [loc for loc in i18n.available() if loc != i18n.SOURCE]


def code_messages() -> dict[str, str]:
    """Every message id in the code (bot/, the console's pages and templates), with where it
    is: extracted from what babel.cfg names, as `make messages` does."""
    with (ROOT / "babel.cfg").open() as cfg:
        method_map, options_map = parse_mapping_cfg(cfg)
    keywords = {k: v or (1,) for k, v in KEYWORDS.items()}
    found: dict[str, str] = {}
    for path, line, msgid, _comments, _ctx in extract_from_dir(
        str(ROOT), method_map, options_map, keywords=keywords
    ):
        if isinstance(msgid, str) and msgid:
            found.setdefault(msgid, f"{path}:{line}")
    return found


def fields(text: str) -> list[str]:
    """The placeholders of a text with their format specs, sorted: `{tokens:,}` in Python,
    `%(name)s` in the console's templates (jinja2's newstyle gettext)."""
    if PERCENT.search(text):
        return sorted(f"%{m.group(1)}:{m.group(2)}" for m in PERCENT.finditer(text))
    return sorted(f"{name}:{spec}" for _, name, spec, _ in string.Formatter().parse(text) if name)


def catalog_problems(locale: str, messages: dict[str, str]) -> list[str]:
    path = i18n.catalog_path(locale)
    where = path.relative_to(ROOT)
    with path.open("rb") as po:
        catalog = read_po(po, locale=locale)
    problems = []
    for msgid, origin in messages.items():
        entry = catalog.get(msgid)
        if entry is None or not entry.string:
            problems.append(f"{origin}: {msgid!r} has no {locale} translation in {where}")
        elif entry.fuzzy:
            problems.append(f"{origin}: {msgid!r} is marked fuzzy in {where}: check it")
        elif fields(msgid) != fields(str(entry.string)):
            problems.append(
                f"{origin}: {msgid!r} has placeholders {fields(msgid)} but its {locale} "
                f"translation in {where} has {fields(str(entry.string))}"
            )
    used = set(messages)
    problems += [
        f"{where}: {m.id!r} is used nowhere in the code any more: remove it (make messages)"
        for m in catalog
        if m.id and m.id not in used
    ]
    return problems


@pytest.mark.parametrize("locale", TRANSLATED)
def test_every_text_has_a_translation_with_the_same_placeholders(locale: str) -> None:
    problems = catalog_problems(locale, code_messages())
    assert not problems, "\n".join(problems)


def test_the_catalogs_are_found_and_the_extraction_sees_the_texts() -> None:
    assert TRANSLATED == ["zh_CN"]
    messages = code_messages()
    assert texts.constants()["STOPPED"] in messages  # a constant
    assert "Stopped {count} running replies." in messages  # a function's text
    assert "show this help" in messages  # a command summary (COMMANDS.register)
    assert len(messages) > 150
    assert "Log out" in messages  # the console's templates
    assert "Skill {name} installed." in messages  # the console's pages
    assert "Restart %(name)s" in messages  # a template's text with a placeholder


def test_a_missing_translation_is_named_with_its_place() -> None:
    problems = catalog_problems("zh_CN", {"A text nobody translated.": "bot/texts/x.py:7"})
    assert problems[0] == (
        "bot/texts/x.py:7: 'A text nobody translated.' has no zh_CN translation in "
        "bot/locales/zh_CN/LC_MESSAGES/antler.po"
    )


def test_a_differing_placeholder_is_named() -> None:
    assert fields("{count} of {total:,}") == ["count:", "total:,"]
    assert fields("{count} 条") != fields("{n} 条")
    assert fields("Restart %(name)s") == ["%name:s"]
    assert fields("重启 %(name)s") != fields("重启 %(who)s")


# ------------------------------------------------------------------ nothing escapes translation


def _unmarked(path: Path) -> Iterator[str]:
    """Strings with letters in `path` that are not message ids: not inside _()/N_()/gettext(),
    not docstrings, dictionary keys, comparisons or format specs."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    exempt: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            exempt.add(id(body[0].value))  # a docstring
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") in MARKERS:
            exempt.update(id(n) for arg in node.args for n in ast.walk(arg))
        elif isinstance(node, ast.Dict):
            exempt.update(id(n) for key in node.keys if key for n in ast.walk(key))
        elif isinstance(node, ast.Compare | ast.Raise):  # comparisons, errors for developers
            exempt.update(id(n) for n in ast.walk(node))
        elif isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            exempt.update(id(n) for n in ast.walk(node.format_spec))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in exempt
        ) and re.search(r"[^\W\d_]", node.value):
            yield f"{path.relative_to(path.parents[2])}:{node.lineno}: {node.value!r}"


def test_every_text_in_bot_texts_is_marked_for_translation() -> None:
    found = [line for p in sorted((ROOT / "bot/texts").glob("*.py")) for line in _unmarked(p)]
    assert not found, (
        "not marked for translation (a constant: N_('...'); in a function: _('... {name}', "
        "name=...), never an f-string):\n" + "\n".join(found)
    )


def test_the_check_finds_an_unmarked_text(tmp_path: Path) -> None:
    bad = tmp_path / "bot/texts/probe.py"
    bad.parent.mkdir(parents=True)
    bad.write_text(
        'X = "Plain."\nY = N_("Fine.")\n\ndef f(n: int) -> str:\n    return f"{n} left"\n'
    )
    assert list(_unmarked(bad)) == [
        "bot/texts/probe.py:1: 'Plain.'",
        "bot/texts/probe.py:5: ' left'",
    ]


def test_the_makefile_extracts_the_same_keywords() -> None:
    makefile = (ROOT / "Makefile").read_text()
    flags = set(re.findall(r"-k (\S+)", makefile))
    assert flags == {"N_", "_", "gettext", "register:2"}


# ------------------------------------------------------------------ every text renders


SAMPLES = {"switch": "thinking"}  # arguments that name one of a few kinds


def _sample(annotation: object) -> object:
    samples = {"int": 2, "float": 1.5, "float | None": 90.0, "bool": True, "list[str]": ["a", "b"]}
    return samples.get(str(annotation), "x")


def _text_functions() -> list[tuple[str, object]]:
    public = [n for n in dir(texts) if not n.startswith("_") and n.islower()]
    return [
        (n, f)
        for n in public
        if inspect.isfunction(f := getattr(texts, n)) and f.__module__.startswith("bot.texts.")
    ]


@pytest.mark.parametrize("locale", i18n.available())
def test_every_text_renders_in_every_language(locale: str) -> None:
    rendered = 0
    with i18n.use(locale):
        for name, fn in _text_functions():
            params = inspect.signature(fn).parameters.values()  # type: ignore[arg-type]
            args = {p.name: SAMPLES.get(p.name) or _sample(p.annotation) for p in params}
            assert fn(**args) is not None, name  # type: ignore[operator]
            rendered += 1
        for name in texts.constants():
            assert getattr(texts, name)
    assert rendered > 60


def test_constants_are_read_in_the_current_language() -> None:
    assert texts.STOPPED == "Stopped."
    with i18n.use("zh_CN"):
        assert texts.STOPPED == "已停止。"
        assert texts.stopped(3) == "已停止 3 条正在生成的回复。"
        assert texts.labels().stopped == "已停止"
    assert texts.STOPPED == "Stopped."
    with pytest.raises(AttributeError):
        _ = texts.NO_SUCH_TEXT  # type: ignore[attr-defined]


def test_dates_are_written_the_locales_way() -> None:
    nine = datetime(2026, 11, 23, 9, 0, tzinfo=ZoneInfo("Asia/Shanghai"))
    assert local_text(nine.timestamp(), "Asia/Shanghai") == "Mon 2026-11-23 09:00 (Asia/Shanghai)"
    with i18n.use("zh_CN"):
        assert local_text(nine.timestamp(), "Asia/Shanghai") == (
            "2026年11月23日 周一 09:00 (Asia/Shanghai)"
        )


@pytest.mark.parametrize(
    ("tag", "locale"),
    [("zh-CN", "zh_CN"), ("zh_CN", "zh_CN"), ("zh-Hans", "zh_CN"), ("zh", "zh_CN"),
     ("ZH-cn", "zh_CN"), ("en", "en"), ("en-GB", "en"), ("fr", None), ("not a tag", None),
     ("", None), (None, None)],
)  # fmt: skip
def test_language_tags(tag: str | None, locale: str | None) -> None:
    assert i18n.supported(tag) == locale


def test_a_locale_without_texts_stops_start_up() -> None:
    raw = {
        "models": [{"name": "m", "model": "m", "api_key": "k"}],
        "channels": {"locale": "zh-CN", "telegram": {"bot_token": "1:x", "locale": "fr"}},
    }
    with pytest.raises(ConfigError) as caught:
        settings_from_dict(raw)
    assert caught.value.problems == [
        "channels.telegram.locale: no texts in 'fr' (one of en, zh-CN)"
    ]
    raw["channels"]["telegram"]["locale"] = "zh"  # type: ignore[index]
    assert settings_from_dict(raw).channels.locale == "zh-CN"


def test_a_named_bots_locale_without_texts_stops_start_up() -> None:
    raw = {
        "models": [{"name": "m", "model": "m", "api_key": "k"}],
        "channels": {
            "telegram": {
                "bot_token": "1:x",
                "bots": [
                    {"name": "support", "bot_token": "2:y", "locale": "zh-CN"},
                    {"name": "sales", "bot_token": "3:z", "locale": "klingon"},
                ],
            }
        },
    }
    with pytest.raises(ConfigError) as caught:
        settings_from_dict(raw)
    assert caught.value.problems == [
        "channels.telegram.bots[1].locale: no texts in 'klingon' (one of en, zh-CN)"
    ]
    raw["channels"]["telegram"]["bots"][1]["locale"] = "en"  # type: ignore[index]
    channels = settings_from_dict(raw).channels
    assert channels.platform("telegram.support").locale == "zh-CN"  # type: ignore[union-attr]
    assert channels.platform("telegram.sales").locale == "en"  # type: ignore[union-attr]
