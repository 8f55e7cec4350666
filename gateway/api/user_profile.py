"""DeerFlow's `/api/user-profile`: the user's own profile (its USER.md: background and
preferences, in markdown), `GET` and `PUT {content}` → `{content}` (null when there is none).

DeerFlow has one user and one USER.md. Antler has people (a platform-qualified account, or the
person it is linked to), so the profile is a person's, kept with their memory (the memory
store's contexts, kind `profile`): without `?person=` the Gateway caller's own person (`api`,
as `/api/memory`), so DeerFlow's UI edits the profile its own runs are given; `?person=` reads
or writes anyone's, for an admin. The profile reaches the agent's prompt as a
`<user_profile>` block on every turn of that person, with every agent (a chat: the sender's;
an API run: the caller's); extraction never writes it, and forgetting the person removes it.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from agent.memory import MemoryService
from gateway.api.memory import PersonQuery, person_of
from gateway.registry import Call, Registry

TAG = "agents"
api = Registry(tag=TAG)
ROUTE = "/api/user-profile"
MAX_CHARS = 16_000


class UserProfileResponse(BaseModel):
    content: str | None = Field(default=None, description="the profile; null when none")


class UserProfileUpdateRequest(BaseModel):
    content: str = Field(default="", max_length=MAX_CHARS, description="empty: remove it")


def _memory(call: Call) -> MemoryService:
    memory: MemoryService = call.gw.service.runner.memory
    return memory


@api.route("GET", ROUTE, query=PersonQuery, response=UserProfileResponse, errors=(422,))
async def get_user_profile(call: Call) -> UserProfileResponse:
    """The user's profile (?person=; else the caller's)"""
    content = await _memory(call).store.profile(await person_of(call))
    return UserProfileResponse(content=content or None)


@api.route("PUT", ROUTE, query=PersonQuery, body=UserProfileUpdateRequest,
           response=UserProfileResponse, errors=(422,))  # fmt: skip
async def update_user_profile(call: Call) -> UserProfileResponse:
    """Write the user's profile (?person=; else the caller's)"""
    body: UserProfileUpdateRequest = call.body
    store = _memory(call).store
    person = await person_of(call)
    await store.set_profile(person, body.content)
    return UserProfileResponse(content=await store.profile(person) or None)
