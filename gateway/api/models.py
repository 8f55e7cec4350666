"""`GET /api/models` and `GET /api/models/{name}`: the configured models, never a secret."""

from __future__ import annotations

from agent.config import ModelConfig
from gateway.errors import ApiError
from gateway.langgraph.schemas import ModelResponse, ModelsResponse, TokenUsage
from gateway.registry import Call, Registry
from gateway.service import Gateway

TAG = "models"
api = Registry(tag=TAG)


def model_response(model: ModelConfig, default: str | None) -> ModelResponse:
    extra = model.extra_kwargs()
    description = extra.get("description")
    return ModelResponse(
        name=model.name,
        model=model.model,
        display_name=model.display_name or None,
        description=description if isinstance(description, str) else None,
        supports_thinking=model.supports_thinking,
        supports_reasoning_effort=bool(extra.get("supports_reasoning_effort", False)),
        supports_vision=model.supports_vision,
        is_default=model.name == default,
    )


def _default(gw: Gateway) -> str:
    return gw.service.runner.resolve_model(None).name


@api.route("GET", "/api/models")
async def list_models(call: Call) -> ModelsResponse:
    """List the configured models"""
    gw: Gateway = call.gw
    default = _default(gw)
    return ModelsResponse(
        models=[model_response(m, default) for m in gw.service.runner.models],
        token_usage=TokenUsage(enabled=gw.service.usage is not None),
    )


@api.route("GET", "/api/models/{name}", errors=(404, 422))
async def get_model(call: Call) -> ModelResponse:
    """Get one model"""
    gw: Gateway = call.gw
    name = call.path["name"]
    for model in gw.service.runner.models:
        if model.name == name:
            return model_response(model, _default(gw))
    raise ApiError(404, f"model {name!r} not found")
