"""The fake Slack's Socket Mode: the websocket, events, commands and presses pushed over it,
and the client's acks (a part of `FakeSlack`, tests/fakes/slack_server.py)."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import aiohttp
from aiohttp import web

from tests.fakes.slack_payloads import action_body, command_body
from tests.fakes.threaded import ThreadedServer


class SocketMode:
    """Socket Mode for `FakeSlack`: what it needs of the fake is declared here."""

    team: str
    bot_user: str
    server: ThreadedServer
    acks: dict[str, dict[str, Any]]
    connected: threading.Event
    _cond: threading.Condition
    _sockets: list[web.WebSocketResponse]
    _ack_events: dict[str, threading.Event]
    wait_for: Callable[..., bool]

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        with self._cond:
            self._sockets.append(ws)
            self._cond.notify_all()
        self.server.websockets.add(ws)
        await ws.send_json(
            {"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A0001"}}
        )
        self.connected.set()
        async for frame in ws:
            if frame.type == aiohttp.WSMsgType.TEXT:
                self._on_frame(frame.data)
        self.server.websockets.discard(ws)
        if ws in self._sockets:
            self._sockets.remove(ws)
        return ws

    def _on_frame(self, data: str) -> None:
        try:
            frame = json.loads(data)
        except ValueError:
            return
        envelope_id = frame.get("envelope_id")
        if envelope_id:
            with self._cond:
                self.acks[envelope_id] = {**frame, "at": time.monotonic()}
                self._cond.notify_all()
            self._ack_events[envelope_id].set()

    def _send(self, envelope: dict[str, Any]) -> str:
        if not self.wait_for(lambda f: any(not w.closed for w in f._sockets)):
            raise AssertionError("no socket mode connection")
        ws = [w for w in self._sockets if not w.closed][-1]
        self.server.call(ws.send_str(json.dumps(envelope)))
        return str(envelope["envelope_id"])

    def event_body(self, event: dict[str, Any], *, event_id: str | None = None) -> dict[str, Any]:
        return {
            "token": "verification",
            "team_id": self.team,
            "api_app_id": "A0001",
            "event": event,
            "type": "event_callback",
            "event_id": event_id or f"Ev{uuid.uuid4().hex[:10]}",
            "event_time": int(time.time()),
            "authorizations": [{"team_id": self.team, "user_id": self.bot_user, "is_bot": True}],
        }

    def push_event(
        self, event: dict[str, Any], *, event_id: str | None = None, retry_attempt: int = 0
    ) -> str:
        """Deliver an Events API event over Socket Mode; returns the envelope id."""
        return self._send(
            {
                "envelope_id": str(uuid.uuid4()),
                "type": "events_api",
                "accepts_response_payload": False,
                "retry_attempt": retry_attempt,
                "retry_reason": "timeout" if retry_attempt else "",
                "payload": self.event_body(event, event_id=event_id),
            }
        )

    def push_edit(
        self, message: dict[str, Any], text: str, *, edited_ts: str, retry_attempt: int = 0
    ) -> dict[str, Any]:
        """The user edits `message` (a `message` event as pushed) to `text` at `edited_ts`: a
        `message_changed` event as Slack sends it (its event id from the version, so pushing
        the same edit again is a redelivery). Returns the edited message, to edit again."""
        edited = {**message, "text": text, "edited": {"user": message["user"], "ts": edited_ts}}
        event = {
            "type": "message",
            "subtype": "message_changed",
            "hidden": True,
            "channel": message["channel"],
            "channel_type": message.get("channel_type"),
            "ts": edited_ts,
            "event_ts": edited_ts,
            "message": {k: v for k, v in edited.items() if k not in ("channel", "channel_type")},
            "previous_message": {
                k: v for k, v in message.items() if k not in ("channel", "channel_type")
            },
        }
        event_id = f"Ev-edit-{message['ts']}-{edited_ts}"
        self.push_event(event, event_id=event_id, retry_attempt=retry_attempt)
        return edited

    def push_command(
        self, text: str, *, channel: str = "D0001", user: str = "U0001", command: str = "/antler"
    ) -> str:
        return self._send(
            {
                "envelope_id": str(uuid.uuid4()),
                "type": "slash_commands",
                "accepts_response_payload": True,
                "payload": command_body(
                    text, channel=channel, user=user, command=command, team=self.team
                ),
            }
        )

    def push_action(
        self,
        value: str,
        *,
        channel: str,
        thread_ts: str | None,
        user: str = "U0001",
        ephemeral: bool = False,
    ) -> str:
        """A button press; `ephemeral`: on a message only the presser saw (no `message`)."""
        return self._send(
            {
                "envelope_id": str(uuid.uuid4()),
                "type": "interactive",
                "accepts_response_payload": False,
                "payload": action_body(
                    value,
                    channel=channel,
                    thread_ts=thread_ts,
                    user=user,
                    team=self.team,
                    ephemeral=ephemeral,
                ),
            }
        )

    def wait_ack(self, envelope_id: str, timeout: float = 5.0) -> dict[str, Any]:
        if not self._ack_events[envelope_id].wait(timeout):
            raise AssertionError(f"envelope {envelope_id} was not acked")
        return self.acks[envelope_id]

    @property
    def open_connections(self) -> int:
        """Socket Mode connections open now (each event goes to ONE of them, as on Slack)."""
        return sum(not ws.closed for ws in self._sockets)

    def disconnect(self) -> None:
        """Ask the client to reconnect, as Slack does (`{"type": "disconnect"}`)."""
        self.connected.clear()
        for ws in list(self._sockets):
            self.server.call(ws.send_json({"type": "disconnect", "reason": "refresh_requested"}))
