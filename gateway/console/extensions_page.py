"""Models (read only) and skills: enable or disable one, install a `.skill` archive."""

from __future__ import annotations

from aiohttp import web

from bot.i18n import text as _
from gateway.api import skill_archive
from gateway.api.skills import install, set_enabled
from gateway.console.web import Ctx, Pages, not_found
from gateway.errors import ApiError

pages = Pages()
HERE = "/console/extensions"


@pages.get(HERE)
async def extensions(ctx: Ctx) -> web.StreamResponse:
    ext = ctx.services.extensions
    reg = ext.skills()
    return ctx.render(
        "extensions.html",
        page="extensions",
        title=_("Models & skills"),
        models=ext.models(),
        default=ext.default_model(),
        skills=[(s, reg.is_enabled(s.name)) for s in reg.skills],
        problems=reg.problems,
        max_mb=skill_archive.MAX_ARCHIVE // (1024 * 1024),
    )


@pages.post(HERE + "/skills/{name}")
async def toggle(ctx: Ctx) -> web.StreamResponse:
    ext = ctx.services.extensions
    name = ctx.request.match_info["name"]
    if ext.skills().get(name) is None:
        return not_found(ctx, _("skill {name}", name=name))
    enabled = await ctx.field("enabled") == "true"
    await set_enabled(ext.config_path(), name, enabled)
    return ctx.back(
        HERE,
        _("Skill {name} enabled.", name=name)
        if enabled
        else _("Skill {name} disabled.", name=name),
    )


@pages.post(HERE + "/install")
async def install_archive(ctx: Ctx) -> web.StreamResponse:
    upload = (await ctx.form()).get("archive")
    data = (
        upload.file.read(skill_archive.MAX_ARCHIVE + 1)
        if isinstance(upload, web.FileField)
        else b""
    )
    if not data:
        return ctx.back(HERE, _("Choose a .skill archive to install."), "error")
    if len(data) > skill_archive.MAX_ARCHIVE:
        return ctx.back(
            HERE,
            _("The archive is larger than {size} bytes.", size=skill_archive.MAX_ARCHIVE),
            "error",
        )
    try:
        skill = await install(ctx.services.extensions.skills(), data)
    except ApiError as exc:
        return ctx.back(HERE, _("Not installed: {reason}", reason=exc.detail), "error")
    return ctx.back(HERE, _("Skill {name} installed.", name=skill.name))
