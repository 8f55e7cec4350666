"""The access-token cache and response checks of the REST client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from channels.base import ChannelError, RateLimited
from channels.dingtalk.api import DingTalkApi, check_response
from tests.channels.dingtalk.conftest import dingtalk_config
from tests.fakes.dingtalk_server import FakeDingTalk


@pytest.fixture
def short_token_fake() -> Iterator[FakeDingTalk]:
    with FakeDingTalk(expire_in=1000).start() as fake:
        yield fake


async def test_token_is_cached_until_shortly_before_expiry(
    short_token_fake: FakeDingTalk,
) -> None:
    now = [100.0]
    api = DingTalkApi(dingtalk_config(short_token_fake), clock=lambda: now[0])
    await api.start()
    try:
        first = await api.access_token()
        now[0] += 600
        assert await api.access_token() == first
        now[0] += 150  # 750 s in: inside the 300 s margin before expiry (1000 s)
        second = await api.access_token()
        assert second != first
        [req, _] = short_token_fake.requests("POST", "/v1.0/oauth2/accessToken")
        assert req.body["appSecret"] == "secret"
    finally:
        await api.close()


def test_check_response_maps_errors() -> None:
    with pytest.raises(RateLimited) as info:
        check_response(429, {"Retry-After": "3"}, "{}", "http://x/v1.0/card/streaming")
    assert info.value.retry_after == 3
    body = '{"code":"Forbidden.AccessDenied.QpsLimitForApi","message":"qps"}'
    with pytest.raises(RateLimited):
        check_response(403, {}, body, "http://x/a")
    with pytest.raises(RateLimited):
        check_response(200, {}, '{"errcode":130101,"errmsg":"too fast"}', "http://x/hook")
    with pytest.raises(ChannelError) as err:
        check_response(503, {}, "oops", "http://x/a")
    assert err.value.retryable
    with pytest.raises(ChannelError) as err:
        check_response(400, {}, '{"code":"param.invalid","message":"bad"}', "http://x/a")
    assert not err.value.retryable
    assert "param.invalid" in str(err.value)
    assert check_response(200, {}, '{"errcode":0}', "http://x/a") == {"errcode": 0}
