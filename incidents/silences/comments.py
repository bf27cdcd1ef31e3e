"""A silence's default comment. Alertmanager gets it in English (its UI has no reader's
language; and the console recognises its own silences by author and comment); the
console shows it in the viewer's language: the form's placeholder worded from the parts,
a listed silence by recognising the default's shape in the comment Alertmanager returns
(silences live in Alertmanager, the console stores no row for them)."""

from __future__ import annotations

import re

from django.contrib.auth.models import User
from django.utils.translation import gettext, gettext_noop

from incidents.models import Incident

DEFAULT = gettext_noop("#%(id)s %(title)s - silenced from the console by %(user)s")
# DEFAULT in English; a username has no spaces (Django's validator), a title may have any.
_DEFAULT_SHAPE = re.compile(
    r"#(?P<id>\d+) (?P<title>.*) - silenced from the console by (?P<user>[\w.@+-]+)", re.S
)


def _params(incident: Incident, actor: User) -> dict[str, object]:
    return {"id": incident.pk, "title": incident.title, "user": actor.get_username()}


def default_comment(incident: Incident, actor: User) -> str:
    """The comment sent to Alertmanager when none is typed (English)."""
    return DEFAULT % _params(incident, actor)


def default_comment_shown(incident: Incident, actor: User) -> str:
    """The same comment in the active language (the form's placeholder)."""
    return gettext(DEFAULT) % _params(incident, actor)


def comment_shown(comment: str) -> str:
    """A silence's comment in the active language when it is the console's default;
    any other comment (a person's words) as written."""
    found = _DEFAULT_SHAPE.fullmatch(comment or "")
    if found is None:
        return comment or ""
    return gettext(DEFAULT) % found.groupdict()
