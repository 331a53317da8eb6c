"""The flow's start message, rendered like a role."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.errors import TemplateRenderError

if TYPE_CHECKING:
    from roost.flow.models import Flow


def render_start(flow: Flow, frm: str, to: str) -> str:
    """The flow's ``start.content``, rendered like a role with ``vars``, ``name`` and ``members``.

    ``name`` is the sender and ``members`` the channel's members (or the two
    nodes); ``now`` is empty, as nothing has happened yet. Text without template
    syntax is the message as it is.
    """
    source = flow.start.content if flow.start is not None else ""
    if "{" not in source:
        return source
    from roost.templating import render_template  # Jinja2, only for a template

    channel = flow.channels.get(to)
    members = list(channel.members) if channel is not None else [frm, to]
    try:
        return render_template(source, vars=flow.vars, name=frm, members=members, now="")
    except TemplateRenderError as error:
        raise TemplateRenderError(f"start.content of {flow.name}: {error}") from None
