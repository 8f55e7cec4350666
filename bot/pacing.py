"""The service paces replies with the channel's own `Pacer` (channels/pacing.py): one
rate-limit mechanism for the service and the channels, so no budget is enforced twice."""

from channels.pacing import Pacer

__all__ = ["Pacer"]
