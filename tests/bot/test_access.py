"""The one access gate: trigger before allowlist, one refusal per user and chat per hour, ids
written as numbers, and every channel's messages pass through it (the service context)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot import texts
from bot.access import REFUSAL_INTERVAL, AccessGate, Verdict
from bot.config.schema import settings_from_dict
from channels.base import ChannelConfig, ChatRef, InboundMessage, PublishResult, UserRef
from channels.pacing import Pacer
from tests.fakes.clock import VirtualClock
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.recording_channel import RecordingChannel
from tests.harness import ServiceHarness


def message(
    text: str = "hi",
    *,
    user: str = "u1",
    chat: str = "c1",
    chat_type: str = "dm",
    bot: bool = False,
    **kw: Any,
) -> InboundMessage:
    where = ChatRef(channel="x", chat_id=chat, chat_type=chat_type)  # type: ignore[arg-type]
    return InboundMessage(
        event_id=f"{chat}:{user}:{text}",
        chat=where,
        sender=UserRef(id=user, is_bot=bot),
        text=text,
        message_id="m1",
        **kw,
    )


def gate(clock: VirtualClock | None = None, **cfg: Any) -> tuple[AccessGate, list[InboundMessage]]:
    told: list[InboundMessage] = []

    async def notify(msg: InboundMessage) -> None:
        told.append(msg)

    config = ChannelConfig(enabled=True, **cfg)
    return AccessGate({"x": config}, Pacer(clock or VirtualClock()), notify), told


@pytest.mark.parametrize(
    ("msg", "expected"),
    [
        (message("hello"), Verdict.admit),
        (message("chatter", chat_type="group"), Verdict.ignore),
        (message("hi", chat_type="group", mentions_bot=True), Verdict.admit),
        (message("and why?", chat_type="group", replies_to_bot=True), Verdict.admit),
        (message("/new", chat_type="group"), Verdict.admit),
        (message("/models fast", chat_type="group", is_button=True), Verdict.admit),
        (message("hi", user="other-bot", bot=True), Verdict.ignore),
    ],
)
def test_group_trigger(msg: InboundMessage, expected: Verdict) -> None:
    g, _ = gate()
    assert g.verdict(msg) is expected


def test_group_trigger_all_and_per_chat_setting() -> None:
    chatter = message("chatter", chat_type="group", chat="g1")
    elsewhere = message("chatter", chat_type="group", chat="g2")
    g, _ = gate(group_trigger_chats={"g1": "all"})
    assert (g.verdict(chatter), g.verdict(elsewhere)) == (Verdict.admit, Verdict.ignore)
    g, _ = gate(group_trigger="all", group_trigger_chats={"g2": "mention"})
    assert (g.verdict(chatter), g.verdict(elsewhere)) == (Verdict.admit, Verdict.ignore)


def test_trigger_is_decided_before_the_allowlist() -> None:
    g, _ = gate(allowed_users=["boss"])
    assert g.verdict(message("chatter", user="x", chat_type="group")) is Verdict.ignore
    assert (
        g.verdict(message("@bot hi", user="x", chat_type="group", mentions_bot=True))
        is Verdict.refuse
    )
    assert g.verdict(message("hi", user="boss")) is Verdict.admit


def test_chat_allowlist() -> None:
    g, _ = gate(allowed_chats=["c1"])
    assert g.verdict(message(chat="c1")) is Verdict.admit
    assert g.verdict(message(chat="c2")) is Verdict.refuse


async def test_one_refusal_per_user_and_chat_per_interval() -> None:
    clock = VirtualClock()
    g, told = gate(clock, allowed_users=["boss"])
    for text in ("let me in", "please", "pretty please"):
        assert await g.screen(message(text, user="x")) is Verdict.refuse
    assert len(told) == 1
    await g.screen(message("me too", user="y"))
    await g.screen(message("and here", user="x", chat="c2"))
    assert len(told) == 3
    clock.advance(REFUSAL_INTERVAL - 1)
    await g.screen(message("still?", user="x"))
    assert len(told) == 3
    clock.advance(2)
    await g.screen(message("now?", user="x"))
    assert len(told) == 4


def test_allowlists_accept_numbers_from_yaml() -> None:
    import yaml

    raw = yaml.safe_load("""
models: [{name: a, model: m}]
channels:
  telegram:
    enabled: true
    bot_token: "123:abc"
    allowed_users: [1001, "1002"]
    allowed_chats: [-100123]
    group_trigger_chats: {-100456: all}
""")
    settings = settings_from_dict(raw)
    cfg = settings.channels.platform("telegram")
    assert cfg is not None
    assert cfg.allowed_users == ["1001", "1002"]
    assert cfg.allowed_chats == ["-100123"]
    assert cfg.group_trigger_chats == {"-100456": "all"}
    g = AccessGate({"x": cfg}, Pacer(VirtualClock()), _never)
    assert g.verdict(message(user="1001", chat="-100123")) is Verdict.admit
    assert g.verdict(message(user="1003", chat="-100123")) is Verdict.refuse


async def _never(msg: InboundMessage) -> None:
    raise AssertionError("no refusal expected")


# --------------------------------------------------------------------------- through the service


@pytest.mark.usefixtures("test_channel_registered")
async def test_service_refuses_with_one_text_and_records_nothing(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    svc = ServiceHarness(
        tmp_path, fake_openai, {"test": {"enabled": True, "allowed_users": ["boss"]}}
    )
    async with svc:
        channel = svc.channel("test")
        assert isinstance(channel, RecordingChannel)
        results = [await channel.inject("let me in", user="x") for _ in range(2)]
        ignored = await channel.inject("chatter", user="x", chat_type="group", chat_id="g")
        assert await channel.inject("hello", user="boss") is PublishResult.accepted
        await fake_openai.wait_requests(1)
        await svc.idle()
        assert svc.app is not None
        recorded = svc.app.bus.counters.published
    assert results == [PublishResult.refused, PublishResult.refused]
    assert ignored is PublishResult.ignored
    assert channel.texts("c1")[0] == texts.NOT_ALLOWED
    assert channel.texts("c1").count(texts.NOT_ALLOWED) == 1
    assert channel.texts("g") == []
    assert recorded == 1  # only the admitted message was recorded
    assert len(fake_openai.requests) == 1


def _discord_gate(**cfg: Any) -> AccessGate:
    from channels.discord.config import DiscordConfig

    async def notify(msg: InboundMessage) -> None:
        return None

    config = DiscordConfig(enabled=True, bot_token="x", **cfg)
    return AccessGate({"discord": config}, Pacer(VirtualClock()), notify)


def _in_guild(
    user: str, roles: tuple[str, ...], guild: str = "g1", chat: str = "c1"
) -> InboundMessage:
    where = ChatRef(channel="discord", chat_id=chat, chat_type="group", workspace=guild)
    return InboundMessage(
        event_id=f"{guild}:{chat}:{user}",
        chat=where,
        sender=UserRef(id=user, roles=roles),
        text="hi",
        mentions_bot=True,
    )


def test_a_role_allowlist_admits_members_of_the_role_besides_the_listed_users() -> None:
    gate_ = _discord_gate(allowed_users=["u1"], allowed_roles=[700])
    assert gate_.verdict(_in_guild("u1", ())) is Verdict.admit
    assert gate_.verdict(_in_guild("u2", ("700",))) is Verdict.admit
    assert gate_.verdict(_in_guild("u3", ("800",))) is Verdict.refuse


def test_a_guild_allowlist_narrows_where_and_refuses_dms() -> None:
    gate_ = _discord_gate(allowed_guilds=["g1"], allowed_channels=["c1"])
    assert gate_.verdict(_in_guild("u1", ())) is Verdict.admit
    assert gate_.verdict(_in_guild("u1", (), guild="g2")) is Verdict.refuse
    assert gate_.verdict(_in_guild("u1", (), chat="c2")) is Verdict.refuse
    dm = InboundMessage(
        event_id="dm",
        chat=ChatRef(channel="discord", chat_id="d1"),
        sender=UserRef(id="u1"),
        text="hi",
    )
    assert gate_.verdict(dm) is Verdict.refuse
