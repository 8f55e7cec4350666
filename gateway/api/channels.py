"""`GET /api/channels` (state and counters of each channel) and `POST .../{name}/restart`."""

from __future__ import annotations

from dataclasses import asdict

from bot.context import ChannelState
from gateway.errors import ApiError
from gateway.langgraph.schemas import ChannelInfo, ChannelRestart, ChannelsResponse
from gateway.registry import Call, Registry
from gateway.service import Gateway

TAG = "channels"
api = Registry(tag=TAG)


def channel_info(name: str, state: ChannelState) -> ChannelInfo:
    counters = {
        "inbound": state.inbound,
        "duplicates": state.duplicates,
        "reconnects": state.reconnects,
        **state.counters,
    }
    # the state's fields by name (ChannelInfo ignores those it does not show)
    return ChannelInfo.model_validate({**asdict(state), "name": name, "counters": counters})


@api.route("GET", "/api/channels")
async def list_channels(call: Call) -> ChannelsResponse:
    """Every channel's state and counters"""
    gw: Gateway = call.gw
    states = gw.service.channel_states()
    return ChannelsResponse(
        service_running=gw.service.intake_open(),
        channels={name: channel_info(name, state) for name, state in states.items()},
    )


@api.route("POST", "/api/channels/{name}/restart", errors=(404, 409, 422))
async def restart_channel(call: Call) -> ChannelRestart:
    """Stop and start a channel"""
    gw: Gateway = call.gw
    name = call.path["name"]
    if name not in gw.service.channel_states():
        raise ApiError(404, f"channel {name!r} is not configured")
    if not gw.service.channel_enabled(name):
        raise ApiError(
            409,
            f"channel {name!r} is disabled; enable it in the configuration "
            f"(PATCH /api/config/channels/{name})",
        )
    ok = await gw.service.restart_channel(name)
    state = gw.service.channel_states()[name]
    message = "restarted" if ok else f"start failed: {state.last_error}; retrying with backoff"
    return ChannelRestart(success=ok, message=message, channel=channel_info(name, state))
