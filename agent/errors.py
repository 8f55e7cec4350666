"""Turn exceptions from a run into a short `Failed(code, message)` a user can read.

Provider SDKs differ (openai, anthropic, httpx), so this looks at the HTTP status and the class
name rather than importing them; the traceback goes to the log, never to the user.
"""

from __future__ import annotations

from agent.events import Failed

_BY_STATUS = {
    400: ("bad_request", "The model provider rejected the request: {reason}"),
    401: ("auth", "The model provider refused the API key (401). Check the model's api_key."),
    403: ("auth", "The model provider denied access (403). Check the model's api_key."),
    404: ("model_not_found", "The model provider does not know this model (404): {reason}"),
    408: ("timeout", "The model took too long to answer. Please try again."),
    413: ("too_large", "The conversation is too long for the model. Start a new one with /new."),
    429: (
        "rate_limited",
        "The model provider is rate-limiting requests (429). Please try again in a moment.",
    ),
}


def describe_failure(exc: BaseException) -> Failed:
    name = type(exc).__name__
    if name == "GraphRecursionError":
        return Failed("recursion_limit", "The agent took too many steps and was stopped.")
    if name == "UsageRefused":  # a budget reached (agent/usage.py): its text is for the user
        return Failed("budget", str(exc))
    if name == "ModelError":
        return Failed("model_config", f"The model is misconfigured: {exc}")
    status = _status_of(exc)
    if status is not None:
        return _from_status(status, exc)
    refused = _refused_connection(exc)
    if refused is not None:  # aiohttp's transport reports a refused connect as a timeout
        return Failed("unreachable", f"The model is not reachable: {refused}")
    if "Timeout" in name:
        return Failed("timeout", "The model took too long to answer. Please try again.")
    if "Connection" in name or isinstance(exc, OSError):
        return Failed("unreachable", f"The model is not reachable: {_reason(exc)}")
    return Failed("internal", "Something went wrong while answering. Please try again.")


def _refused_connection(exc: BaseException) -> str | None:
    """The reason of a refused or reset connection behind `exc` (its cause chain), if any."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, ConnectionError):
            return _reason(cause)
        cause = cause.__cause__ or cause.__context__
    return None


def _from_status(status: int, exc: BaseException) -> Failed:
    if status in _BY_STATUS:
        code, template = _BY_STATUS[status]
        return Failed(code, template.format(reason=_reason(exc)))
    if status >= 500:
        return Failed(
            "provider_error",
            f"The model provider had an error ({status}). Please try again in a moment.",
        )
    return Failed("provider_error", f"The model provider answered {status}: {_reason(exc)}")


def _status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    if status is None:
        status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def _reason(exc: BaseException, limit: int = 200) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        message = body.get("message") or (body.get("error") or {}).get("message")
        if isinstance(message, str) and message:
            return message[:limit]
    cause = exc.__cause__ or exc.__context__
    text = str(exc) or (str(cause) if cause else "") or "no details"
    return text.splitlines()[0][:limit]


def setup_failure(exc: Exception) -> Failed:
    """A run that could not start: a bad request (ValueError) or the failure as described."""
    if isinstance(exc, ValueError):
        return Failed("bad_request", str(exc))
    return describe_failure(exc)
