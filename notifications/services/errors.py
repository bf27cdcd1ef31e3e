"""Why a delivery failed, as the console words it (console/texts/): Delivery.last_error
keeps the English (search, old readers), Delivery.texts["last_error"] the parts, worded
in the reader's language on the deliveries page and in the API. What a remote server or
library said (Slack's answer, the mail server's, a connection error) is a parameter,
shown as it came."""

from __future__ import annotations

from typing import Any

from django.utils import translation
from django.utils.functional import Promise
from django.utils.translation import gettext, gettext_noop, ngettext_lazy

from console.errors import Translatable
from console.texts import Msg, as_api, msg, render, texts_register

ERROR_MAX = 2000  # what a row keeps of the English (delivery_fail's old bound)


class _Refusal(Promise):
    """A refusal the console already words (an OutgoingRefused: its gettext_noop msgid
    and params), in the reader's language: the msgid is a parameter, its own
    parameters stored beside it in English, the lazy ones (a kind of address) marked to
    be looked up in the catalogue too."""

    def __mod__(self, values: dict[str, Any]) -> str:
        values = dict(values)
        msgid = str(values.pop("msgid", ""))
        lazy = set(filter(None, str(values.pop("lazy", "")).split(",")))
        params = {k: gettext(str(v)) if k in lazy else v for k, v in values.items()}
        return gettext(msgid) % params if params else gettext(msgid)

    def __str__(self) -> str:
        return "%(msgid)s"


texts_register(
    {
        "notifications.error.unknown_kind": gettext_noop("Unknown target kind %(kind)s."),
        "notifications.error.slack_url": gettext_noop(
            "apprise does not read this as a Slack incoming webhook URL; paste the URL "
            "Slack gave you (https://hooks.slack.com/services/T…/B…/…) into the target."
        ),
        "notifications.error.timeout": gettext_noop(
            "%(destination)s did not answer within %(seconds)s s."
        ),
        # %(detail)s: what apprise logged of Slack's answer.
        "notifications.error.slack_refused": gettext_noop(
            "Slack did not take the message: %(detail)s"
        ),
        "notifications.error.no_reason": gettext_noop("no reason given"),
        # %(detail)s: the innermost cause, as the library said it ("Connection refused").
        "notifications.error.unreachable": gettext_noop(
            "Could not reach %(destination)s: %(detail)s. Check the target's URL and that "
            "the worker can reach that host."
        ),
        "notifications.error.http_status": gettext_noop(
            "%(destination)s answered HTTP %(status)s."
        ),
        "notifications.error.redirect": gettext_noop(
            "Point the target at the final URL (redirects are not followed)."
        ),
        "notifications.error.secret": gettext_noop(
            "Check that the receiver has the target's current secret."
        ),
        "notifications.error.mail_refused": gettext_noop(
            "The mail server refused %(recipients)s; fix the target's addresses."
        ),
        "notifications.error.mail_failed": gettext_noop(
            "Could not send mail through %(host)s:%(port)s: %(detail)s. Check EMAIL_HOST, "
            "EMAIL_PORT and the credentials."
        ),
        "notifications.error.gave_up": ngettext_lazy(
            "Gave up after %(count)s attempt.", "Gave up after %(count)s attempts.", "count"
        ),
        "notifications.error.not_queued": gettext_noop(
            "Could not queue it for the worker (%(detail)s); the broker (%(broker)s) did not "
            "answer. It is queued again every minute."
        ),
        "notifications.error.target_disabled": gettext_noop(
            "The target was disabled before this could be sent."
        ),
        # %(detail)s: the exception, as Python shows it.
        "notifications.error.worker_failed": gettext_noop("The worker failed: %(detail)s"),
        # An error some caller gave as plain text: shown as written.
        "notifications.error.text": gettext_noop("%(text)s"),
        "notifications.error.refused": _Refusal(),  # type: ignore[call-arg]
    }
)


def refused(exc: Translatable) -> Msg:
    """An OutgoingRefused (the address guard's words) as a text."""
    params: dict[str, Any] = {}
    lazy = []
    for name, value in (exc.params or {}).items():
        if isinstance(value, Promise):
            lazy.append(name)
        params[name] = value if isinstance(value, (int, float)) else _english(value)
    return msg("notifications.error.refused", msgid=exc.message, lazy=",".join(lazy), **params)


def _english(value: Any) -> str:
    with translation.override(None):
        return str(value)


def error_texts(texts: dict[str, Any] | None, said: Msg | None) -> dict[str, Any]:
    """A delivery's `texts` with its last error's parts, or without (an error stored only
    as text: old parts must not word it instead)."""
    out = {k: v for k, v in (texts or {}).items() if k != "last_error"}
    if said is not None:
        out["last_error"] = said.stored
    return out


def error_english(said: Msg) -> str:
    return said.english[:ERROR_MAX]


def last_error_shown(delivery: Any) -> str:
    """The delivery's last error in the active language ("" when it has none: parts left
    from an earlier attempt never speak for an empty column)."""
    if not delivery.last_error:
        return ""
    return render((delivery.texts or {}).get("last_error"), fallback=delivery.last_error)


def last_error_i18n(delivery: Any) -> list[dict[str, Any]] | None:
    """Its ids and parameters; None when it has none or was stored only as text."""
    if not delivery.last_error:
        return None
    return as_api((delivery.texts or {}).get("last_error"))
