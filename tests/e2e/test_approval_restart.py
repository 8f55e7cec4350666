"""An approval pressed after a crash: `antler serve` as a subprocess with the real
dingtalk-stream SDK against the fake DingTalk, SIGKILLed while the approval card waits and
started again on the same data dir. The press resumes the paused run (its interrupt is in the
checkpoint, the request in the choices store) once, redelivery included."""

from __future__ import annotations

from pathlib import Path

from tests.deploy import WRITE, deployed
from tests.e2e import test_dingtalk_choice_restart as restart
from tests.e2e.service_process import ServiceProcess, wait_until
from tests.fakes.dingtalk_server import FakeDingTalk
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_wire import Reply


def written(svc: ServiceProcess) -> list[str]:
    return deployed(Path(svc.dir) / "data")


def shown(fake: FakeDingTalk) -> str:
    return str([card["params"] for card in fake.cards.values()]) + str(fake.calls)


ask, start = restart.ask, restart.start
dingtalk, service = restart.dingtalk, restart.service  # the fixtures


def test_an_approval_pressed_after_a_crash_resumes_the_run_once(
    service: ServiceProcess, fake_openai: FakeOpenAI, dingtalk: FakeDingTalk
) -> None:
    service.config.write_text(
        service.config.read_text()
        + "access:\n  default_role: admin\n  approvals:\n    tools: {write_file: always}\n"
    )
    fake_openai.script(
        WRITE,
        Reply(text="Deployed v7."),
    )
    start(service, dingtalk)
    ask(dingtalk, "@Antler deploy v7")
    wait_until(lambda: dingtalk.button_cards(), 30, "the approval card")
    [card] = dingtalk.button_cards()
    wait_until(lambda: dingtalk.cards[card]["delivered_to"], 10, "the card's delivery")
    assert "Approval needed" in str(dingtalk.card_params(card))
    service.kill()
    assert written(service) == []
    start(service, dingtalk)

    frame = dingtalk.push_card_press(card, dingtalk.card_buttons(card)["Approve"])
    wait_until(lambda: len(fake_openai.requests) == 2, 30, "the run to resume")
    wait_until(lambda: written(service) == ["v7"], 30, "the approved call")
    wait_until(lambda: "Deployed v7." in shown(dingtalk), 30, "the answer")
    dingtalk.redeliver(frame)
    wait_until(lambda: "duplicate dingtalk:card:" in service.output(), 20, "the redelivery")
    assert len(fake_openai.requests) == 2
    assert written(service) == ["v7"]
    assert "Traceback" not in service.output()
