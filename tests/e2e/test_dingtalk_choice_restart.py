"""A DingTalk button pressed after a restart: `antler serve` as a subprocess with the real
dingtalk-stream SDK against the fake DingTalk, SIGKILLed while a card waits for its press and
started again on the same data dir. The press is honoured, once, redelivery included."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.service_process import ServiceProcess, wait_until
from tests.fakes.dingtalk_server import FakeDingTalk
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.threaded import fake_fixture


def ask(fake: FakeDingTalk, text: str) -> str:
    """A group message @-ing the robot; returns the frame's id."""
    return fake.push_message(fake.chatbot_data(text, group=True, conversation_id="cid-restart"))


dingtalk = fake_fixture(FakeDingTalk, "dingtalk")


@pytest.fixture
def service(
    tmp_path: Path, fake_openai: FakeOpenAI, dingtalk: FakeDingTalk
) -> Iterator[ServiceProcess]:
    channel = dingtalk.channel_config("ding-restart")
    base = {"api_key": "sk", "base_url": fake_openai.base_url, "max_retries": 0}
    models = [
        {"name": "fast", "display_name": "Fast", "model": "fake-fast", **base},
        {"name": "smart", "display_name": "Smart", "model": "fake-smart", **base},
    ]
    svc = ServiceProcess(tmp_path, fake_openai.base_url, {"dingtalk": channel}, models=models)
    yield svc
    svc.stop()


def start(svc: ServiceProcess, fake: FakeDingTalk) -> None:
    connections = fake.connections
    svc.start()
    wait_until(lambda: fake.connections > connections, 60, "the service to connect")
    wait_until(lambda: fake.open_connections == 1, 20, "the killed process's socket to close")


def press_messages(svc: ServiceProcess) -> list[str]:
    with sqlite3.connect(svc.dir / "data" / "antler.db") as db:
        return [key for (key,) in db.execute("SELECT key FROM journal") if "card:" in key]


def test_a_press_after_a_restart_is_honoured_once(
    service: ServiceProcess, fake_openai: FakeOpenAI, dingtalk: FakeDingTalk
) -> None:
    start(service, dingtalk)
    ask(dingtalk, "@Antler /models")
    wait_until(lambda: dingtalk.button_cards(), 30, "the /models card")
    [card] = dingtalk.button_cards()
    wait_until(lambda: dingtalk.cards[card]["delivered_to"], 10, "the card's delivery")
    service.kill()
    start(service, dingtalk)

    frame = dingtalk.push_card_press(card, dingtalk.card_buttons(card)["Smart"])
    wait_until(lambda: len(dingtalk.button_cards()) == 2, 30, "the answer to the press")
    assert "✓ Smart" in dingtalk.card_params(card)["staticMsgContent"]
    assert dingtalk.card_buttons(card) == {}
    # DingTalk delivers the press again (its ack lost): the journal takes it once
    dingtalk.redeliver(frame)
    wait_until(lambda: "duplicate dingtalk:card:" in service.output(), 20, "the redelivery")
    assert len(press_messages(service)) == 1
    assert len(dingtalk.button_cards()) == 2
    assert "✓ Smart" in dingtalk.card_params(card)["staticMsgContent"]
    # and the choice was acted on
    ask(dingtalk, "@Antler hi")
    wait_until(lambda: fake_openai.requests, 30, "the model to be asked")
    assert fake_openai.requests[-1].model == "fake-smart"
    assert "Traceback" not in service.output()
