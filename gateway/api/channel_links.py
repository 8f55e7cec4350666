"""DeerFlow's per-person channel links (`GET /api/channels/providers`, `/connections`) mapped
to Antler: each enabled channel is a provider the operator configured (a bot of its own, in
config.yaml), connected when the channel is; nothing is connected from the web page, so
`connectable` is false and the list of a person's connections is empty."""

from __future__ import annotations

from pydantic import BaseModel

from gateway.registry import Call, Registry
from gateway.service import Gateway

TAG = "channels"
api = Registry(tag=TAG)
DISPLAY = {
    "slack": "Slack",
    "telegram": "Telegram",
    "feishu": "Feishu/Lark",
    "dingtalk": "DingTalk",
    "discord": "Discord",
    "wecom": "WeCom",
}
NOT_HERE = "Antler's own {name} bot, configured in config.yaml; people talk to it in {name}"


class Provider(BaseModel):
    provider: str
    display_name: str
    enabled: bool
    configured: bool
    connectable: bool
    unavailable_reason: str | None
    auth_mode: str
    connection_status: str
    credential_fields: list[dict[str, object]] = []


class ProvidersResponse(BaseModel):
    enabled: bool
    providers: list[Provider]


class ConnectionsResponse(BaseModel):
    connections: list[dict[str, object]]


@api.route("GET", "/api/channels/providers")
async def providers(call: Call) -> ProvidersResponse:
    """Antler's channels as DeerFlow's channel providers"""
    gw: Gateway = call.gw
    found = []
    for name, state in gw.service.channel_states().items():
        display = DISPLAY.get(name, name)
        found.append(
            Provider(
                provider=name,
                display_name=display,
                enabled=state.enabled,
                configured=True,
                connectable=False,
                unavailable_reason=NOT_HERE.format(name=display),
                auth_mode="bot",
                connection_status="connected" if state.connected else "disconnected",
            )
        )
    return ProvidersResponse(enabled=bool(found), providers=found)


@api.route("GET", "/api/channels/connections")
async def connections(call: Call) -> ConnectionsResponse:
    """A person's channel links (none are made from the web page)"""
    return ConnectionsResponse(connections=[])
