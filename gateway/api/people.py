"""`/api/people` and `/api/roles`: people with their linked accounts and roles, and the roles.

A person's role given here beats `access.people` in config.yaml (`null` takes it back); linking
and unlinking work as `/link` and `/unlink` do (bot/access/links.py). Roles are config.yaml's
`access.roles`: `PUT /api/roles/{name}` validates the whole file and applies it live, like every
config edit (409 without a config file). Every change is in the audit trail, with who made it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.access.links import Links
from bot.access.people import LinkingOff
from bot.access.roles import RoleConfig, default_roles
from bot.access.store import AuditEntry
from gateway.api.audit import people_of
from gateway.api.config import ConfigChange, _edit, _raw_body, _who
from gateway.errors import ApiError, present
from gateway.registry import PATH_PARAMS, Call, Registry

TAG = "access"
api = Registry(tag=TAG)
PATH_PARAMS.setdefault("account", r"^[^/\\\x00-\x1f]{1,256}$")
PATH_PARAMS.setdefault("role", r"^[A-Za-z0-9_.-]{1,64}$")


class PeopleQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")
    q: str = Field(default="", max_length=256, description="part of a person or account id")
    limit: int = Field(default=50, ge=1, le=500)


class PersonResponse(BaseModel):
    person: str
    accounts: list[str]
    role: str
    role_from: Literal["api", "config"]


class PeopleResponse(BaseModel):
    people: list[PersonResponse]


class RoleUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: str | None = Field(description="a role of access.roles; null: the config's again")


class AccountLink(BaseModel):
    model_config = ConfigDict(extra="forbid")
    account: str = Field(min_length=3, max_length=256, pattern=r"^[a-z]+:\S+$")


class RolesResponse(BaseModel):
    roles: dict[str, dict[str, Any]]
    defaults: list[str] = Field(description="roles that are built in (admin, member, guest)")
    default_role: str


async def person_response(call: Call, person: str) -> PersonResponse:
    people = people_of(call)
    given = await people.store.role(person)
    return PersonResponse(
        person=person,
        accounts=await people.accounts_of(person),
        role=await people.role_of(person),
        role_from="api" if given is not None else "config",
    )


@api.route("GET", "/api/people", query=PeopleQuery, errors=(409, 422))
async def list_people(call: Call) -> PeopleResponse:
    """Search people"""
    q: PeopleQuery = call.query
    people = people_of(call)
    found: set[str] = set(await people.store.roles()) | set(people.config().people)
    for account, person in await people.linked(q.q, q.limit):
        found |= {account, person}
    persons = {await people.person_of(p) for p in found if q.q in p}
    ordered = sorted(persons)[: q.limit]
    return PeopleResponse(people=[await person_response(call, p) for p in ordered])


@api.route("GET", "/api/people/{person}", errors=(409, 422))
async def get_person(call: Call) -> PersonResponse:
    """A person: accounts and role"""
    return await person_response(call, await people_of(call).person_of(call.path["person"]))


@api.route("PUT", "/api/people/{person}/role", body=RoleUpdate, errors=(409, 422))
async def put_role(call: Call) -> PersonResponse:
    """Give a person a role"""
    people = people_of(call)
    body: RoleUpdate = call.body
    roles = people.config().roles
    if body.role is not None and body.role not in roles:
        raise ApiError(422, f"role: unknown role {body.role!r} (roles: {', '.join(roles)})")
    person = await people.person_of(call.path["person"])
    before = await people.role_of(person)
    await people.store.set_role(person, body.role, _who(call))
    after = await people.role_of(person)
    await people.audit.record(
        AuditEntry(
            kind="role", actor=_who(call), person=person, subject=after,
            detail={"from": before, "to": after, "given": body.role},
        )
    )  # fmt: skip
    return await person_response(call, person)


def links_of(call: Call) -> Links:
    return present(call.gw.service.links, "access is not set up on this service")


@api.route("POST", "/api/people/{person}/accounts", body=AccountLink, errors=(409, 422))
async def link_account(call: Call) -> PersonResponse:
    """Link an account to a person"""
    body: AccountLink = call.body
    people = people_of(call)
    person = await people.person_of(call.path["person"])
    try:
        await links_of(call).link(body.account, person, actor=_who(call))
    except LinkingOff as exc:
        raise ApiError(409, str(exc)) from None
    return await person_response(call, person)


@api.route("DELETE", "/api/people/{person}/accounts/{account}", errors=(404, 409, 422))
async def unlink_account(call: Call) -> PersonResponse:
    """Unlink an account"""
    people = people_of(call)
    person = await people.person_of(call.path["person"])
    account = call.path["account"]
    if account == person and len(await people.accounts_of(person)) > 1:
        raise ApiError(409, "account: the others are linked to this one; unlink them instead")
    if await people.person_of(account) != person or account == person:
        raise ApiError(404, f"account: {account} is not linked to {person}")
    await links_of(call).unlink(account, actor=_who(call))
    return await person_response(call, person)


@api.route("GET", "/api/roles", errors=(409,))
async def list_roles(call: Call) -> RolesResponse:
    """The roles and what each grants"""
    cfg = people_of(call).config()
    return RolesResponse(
        roles={name: role.model_dump() for name, role in cfg.roles.items()},
        defaults=list(default_roles()),
        default_role=cfg.default_role,
    )


@api.route("PUT", "/api/roles/{role}", body=RoleConfig, errors=(409, 422))
async def put_role_config(call: Call) -> ConfigChange:
    """Define or replace a role (validated, live)"""
    body = await _raw_body(call)
    return await _edit(call, ("access", "roles", call.path["role"]), body, replace=True)
