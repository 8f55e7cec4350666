"""What the chaos tests share: traffic that keeps coming while an engine fails, and the check
that every message was answered once, with nothing else shown.

The engines are the tests' own (tests/pg_server.py, tests/redis_server.py `Throwaway`s), never
the machine's shared servers: these tests stop and restart them.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from tests.e2e.service_process import wait_until
from tests.fakes.telegram_server import FakeTelegram

RECOVERY_BOUND = 60.0  # seconds from the fault's end to the last answer (docs/scale-out.md)


@dataclass
class Traffic:
    """Messages to `chats` private chats, one every `every` seconds, from a thread, until
    `stop()`; `expected` is what each chat must show in the end: each answer once, in order."""

    telegram: FakeTelegram
    chats: list[int]
    every: float = 0.15
    expected: dict[int, list[str]] = field(default_factory=lambda: defaultdict(list))
    sent: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> Traffic:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)

    def _run(self) -> None:
        while not self._stop.is_set():
            chat = self.chats[self.sent % len(self.chats)]
            text = f"message {self.sent}"
            self.expected[chat].append(f"echo: {text}")
            self.telegram.push_message(chat, text)
            self.sent += 1
            self._stop.wait(self.every)

    def shown(self) -> dict[int, list[str]]:
        """chat → the texts of its messages in message-id order (the bot's, as seen now)."""
        found: dict[int, list[str]] = defaultdict(list)
        for (chat, _), text in sorted(self.telegram.messages.items()):
            found[chat].append(text)
        return found

    def finished(self) -> dict[int, list[str]]:
        """chat → the answers in the order they were first shown whole (sent, or edited into a
        notice): a queued notice is posted when its message arrives, so an answer streamed as a
        draft meanwhile lands below it; the order they finished in is the conversation's."""
        finals = {t for texts in self.expected.values() for t in texts}
        found: dict[int, list[str]] = defaultdict(list)
        for c in self.telegram.calls_of("sendMessage", "editMessageText"):
            text = c.body.get("text", "")
            done = found[int(c.body["chat_id"])]
            if text in finals and text not in done:
                done.append(text)
        return found

    def answered(self) -> bool:
        """Each chat shows exactly its answers (each once, no notice left) and they finished
        in the order asked."""
        shown, finished = self.shown(), self.finished()
        return all(
            sorted(shown[c]) == sorted(self.expected[c]) and finished[c] == self.expected[c]
            for c in self.chats
        )

    def wrong(self) -> str:
        shown, finished = self.shown(), self.finished()
        bad = {
            c: (shown[c], finished[c], self.expected[c])
            for c in self.chats
            if sorted(shown[c]) != sorted(self.expected[c]) or finished[c] != self.expected[c]
        }
        first = next(iter(bad), None)
        calls = [
            (round(c.at, 2), c.method, c.body.get("text"), c.body.get("message_id"))
            for c in self.telegram.calls
            if str(c.body.get("chat_id")) == str(first)
        ]
        return (
            f"{len(bad)} chats not shown exactly their answers (shown, finished, expected): {bad}; "
            f"what chat {first} was sent: {calls}"
        )

    def settle(self, since: float, bound: float = RECOVERY_BOUND) -> float:
        """Seconds from `since` (the fault's end) until every chat shows exactly its answers;
        the test fails past `bound` with what is shown."""
        deadline = since + bound
        while not self.answered():
            if time.monotonic() > deadline:
                raise AssertionError(self.wrong())
            time.sleep(0.25)
        return time.monotonic() - since


def during(traffic: Traffic, fault: Callable[[], None], before: float = 2.0) -> float:
    """Traffic for `before` seconds, then `fault()` under it (which returns when the fault has
    ended), then traffic on for 2 s more; the time the fault ended."""
    traffic.start()
    wait_until(lambda: traffic.sent > 0, 10, "traffic")
    time.sleep(before)
    fault()
    ended = time.monotonic()
    time.sleep(2)
    traffic.stop()
    return ended


def report(name: str, traffic: Traffic, recovered: float, **figures: object) -> None:
    """One line for docs/scale-out.md (`pytest -s` shows it)."""
    extra = " ".join(f"{k}={v}" for k, v in figures.items())
    print(f"\nCHAOS {name}: {traffic.sent} messages, all answered once, last answer "
          f"{recovered:.1f} s after the fault ended {extra}")  # fmt: skip
