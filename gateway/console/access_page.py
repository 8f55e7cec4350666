"""People & audit: who has which role (and linked accounts), give a role; the audit trail.

The role change is the one `PUT /api/people/{person}/role` makes (bot/access/), recorded in the
audit with the console as the actor.
"""

from __future__ import annotations

import re

from aiohttp import web

from bot.access.people import LinkingOff, People
from bot.access.store import AuditEntry, AuditQuery
from bot.i18n import text as _
from gateway.console.web import Ctx, Pages
from gateway.errors import present
from gateway.registry import PATH_PARAMS

pages = Pages()
PEOPLE = "/console/people"
AUDIT = "/console/audit"
KINDS = ("tool", "denied", "approval", "link", "unlink", "role", "config", "budget", "console")


def _people(ctx: Ctx) -> People:
    return present(ctx.services.people, "access is not set up on this service")


@pages.get(PEOPLE)
async def people_page(ctx: Ctx) -> web.StreamResponse:
    people = _people(ctx)
    found = set(await people.store.roles()) | set(people.config().people)
    found |= {p for _, p in await people.linked("", 500)}
    rows = []
    for person in sorted({await people.person_of(p) for p in found}):
        given = await people.store.role(person)
        rows.append((person, await people.accounts_of(person), await people.role_of(person), given))
    return ctx.render(
        "people.html",
        page="people",
        title=_("People"),
        rows=rows,
        roles=list(people.config().roles),
    )


@pages.post(PEOPLE + "/{person}/role")
async def set_role(ctx: Ctx) -> web.StreamResponse:
    people = _people(ctx)
    person = ctx.request.match_info["person"]
    role = await ctx.field("role")
    if not re.fullmatch(PATH_PARAMS["person"], person):
        return ctx.back(PEOPLE, _("Not a person id."), "error")
    if role and role not in people.config().roles:
        return ctx.back(PEOPLE, _("Unknown role {role}.", role=repr(role)), "error")
    person = await people.person_of(person)
    before = await people.role_of(person)
    await people.store.set_role(person, role or None, "console")
    after = await people.role_of(person)
    detail = {"from": before, "to": after, "given": role or None}
    entry = AuditEntry(kind="role", actor="console", person=person, subject=after, detail=detail)
    await people.audit.record(entry)
    return ctx.back(PEOPLE, _("{person} is now {after}.", person=person, after=after))


@pages.post(PEOPLE + "/{person}/accounts")
async def link_account(ctx: Ctx) -> web.StreamResponse:
    people, links = _people(ctx), ctx.services.links
    person = ctx.request.match_info["person"]
    account = await ctx.field("account")
    if links is None or not re.fullmatch(PATH_PARAMS["person"], person):
        return ctx.back(PEOPLE, _("Not a person id."), "error")
    if not re.fullmatch(r"[a-z]+:\S{1,250}", account):
        return ctx.back(PEOPLE, _("An account is channel:id, e.g. slack:U0123."), "error")
    person = await people.person_of(person)
    try:
        await links.link(account, person, actor="console")
    except LinkingOff as exc:
        return ctx.back(PEOPLE, _("Not linked: {reason}.", reason=exc), "error")
    return ctx.back(PEOPLE, _("{account} is now {person}.", account=account, person=person))


@pages.post(PEOPLE + "/{person}/accounts/{account}/unlink")
async def unlink_account(ctx: Ctx) -> web.StreamResponse:
    people, links = _people(ctx), ctx.services.links
    account, person = ctx.request.match_info["account"], ctx.request.match_info["person"]
    if links is None or not all(re.fullmatch(PATH_PARAMS["person"], v) for v in (account, person)):
        return ctx.back(PEOPLE, _("Not an account id."), "error")
    if await people.person_of(account) != await people.person_of(person):
        return ctx.back(
            PEOPLE,
            _("{account} is not linked to {person}.", account=account, person=person),
            "error",
        )
    try:
        result = await links.unlink(account, actor="console")
    except LinkingOff as exc:
        return ctx.back(PEOPLE, _("Not unlinked: {reason}.", reason=exc), "error")
    said = {
        "unlinked": (_("{account} is on its own again.", account=account), "ok"),
        "anchor": (
            _("The others are linked to {account}: unlink them instead.", account=account),
            "error",
        ),
        "not_linked": (_("{account} is not linked.", account=account), "error"),
    }[result]
    return ctx.back(PEOPLE, *said)


@pages.get(AUDIT)
async def audit_page(ctx: Ctx) -> web.StreamResponse:
    people = _people(ctx)
    kind = ctx.request.query.get("kind") or None
    person = (ctx.request.query.get("person") or "").strip()[:256] or None
    before = ctx.request.query.get("before_id", "")
    query = AuditQuery(
        kind=kind if kind in KINDS else None,
        person=person,
        before_id=int(before) if before.isdigit() and int(before) > 0 else None,
        limit=100,
    )
    entries = await people.store.audit(query)
    older = entries[-1].id if len(entries) == query.limit else None
    return ctx.render(
        "audit.html",
        page="audit",
        title=_("Audit"),
        entries=entries,
        kinds=KINDS,
        kind=query.kind or "",
        person=person or "",
        older=older,
    )
