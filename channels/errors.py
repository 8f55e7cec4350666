"""What a channel raises when a platform call fails."""

from __future__ import annotations

from channels.types import Scope


class ChannelError(Exception):
    """A platform call failed. `retryable` says whether the same call may succeed later."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


class RateLimited(ChannelError):
    """The platform said slow down. Wait `retry_after` seconds; `scope` is what is blocked
    (for `method` only, when the platform limits that method alone; "" blocks every call)."""

    def __init__(self, retry_after: float, *, scope: Scope = "chat", method: str = "") -> None:
        super().__init__(f"rate limited for {retry_after:.1f}s", retryable=True)
        self.retry_after = float(retry_after)
        self.scope = scope
        self.method = method


class DeliveryRefused(ChannelError):
    """A definitive no: the chat is gone, the bot was blocked or removed, or it may not post
    there. Retrying cannot help; `reason` is a short plain-words label for the journal."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"delivery refused: {reason}" + (f" ({detail})" if detail else ""))
        self.reason = reason


class FileTooLarge(ChannelError):
    def __init__(self, name: str, size: int, limit: int) -> None:
        mb = limit / (1024 * 1024)
        super().__init__(f"{name} is larger than the {mb:g} MB limit")
        self.name, self.size, self.limit = name, size, limit
