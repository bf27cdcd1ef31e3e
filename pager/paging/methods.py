"""Contact methods, kind by kind: what `address` must be, how it is shown, and the
apprise URL a message is sent to (the sending itself: pager/paging/send.py).

- ntfy (ntfy:// or ntfys://, ntfy.sh or a self-hosted server), Pushover (pover://),
  Gotify (gotify:// or gotifys://), Telegram (tgram://), a Slack direct message
  (slack:// with a bot token, to @user or a member id): an apprise URL of that service.
- SMS: an apprise URL of one of the SMS providers in SMS_SCHEMES; voice: Twilio's
  (twilio://...?method=call), the one apprise plugin that places a call.
- email: one address, sent through Django's mail (EMAIL_*).
- webhook: an http(s) URL, with the signing key after `#secret=` (a fragment is never
  sent, so the key stays out of the request line and the receiver's logs).

An address often carries a token (a bot token, a topic that is as good as a password),
so it is shown as `address_masked` (scheme and host, nothing more) in every error, log
line, page and audit row.
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, parse_qsl, urlencode, urlsplit, urlunsplit

import apprise
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.utils.translation import gettext_noop

from console.errors import DomainError
from console.outgoing import OutgoingRefused, check_url_form, url_check
from console.texts import Msg
from pager.models import ContactKind
from pager.texts import method_words, pager_msg

K = ContactKind

# apprise's SMS plugins (checked against apprise's own list by the tests). A provider
# not here can be added once someone has used it for pages.
SMS_SCHEMES = frozenset(
    {
        "46elks", "atalk", "bulksms", "bulkvs", "burstsms", "clickatell", "clicksend",
        "cm", "d7sms", "elks", "exotel", "freemobile", "httpsms", "infobip", "kaleyra",
        "kavenegar", "klr", "kudosity", "mobilemessage", "mobilemsg", "msg91", "msgbird",
        "nexmo", "notifyre", "octopush", "plivo", "ringc", "serwersms", "seven", "signal",
        "signals", "sinch", "smsc", "smseagle", "smseagles", "smsmanager", "smsmgr",
        "smstunnel", "sns", "telesign", "telnyx", "twilio", "voipms", "vonage",
    }
)  # fmt: skip
# Placing a call: Twilio with method=call reads the text aloud.
VOICE_SCHEMES = frozenset({"twilio"})

KIND_SCHEMES: dict[str, frozenset[str]] = {
    K.NTFY: frozenset({"ntfy", "ntfys"}),
    K.PUSHOVER: frozenset({"pover"}),
    K.GOTIFY: frozenset({"gotify", "gotifys"}),
    K.TELEGRAM: frozenset({"tgram"}),
    K.SLACK_DM: frozenset({"slack"}),
    K.SMS: SMS_SCHEMES,
    K.VOICE: VOICE_SCHEMES,
}
APPRISE_KINDS = frozenset(KIND_SCHEMES)
# Short English names, for the timeline (stored once, in English) and the errors.
KIND_WORDS: dict[str, str] = {
    K.NTFY: "ntfy",
    K.PUSHOVER: "Pushover",
    K.GOTIFY: "Gotify",
    K.SMS: "SMS",
    K.VOICE: "voice call",
    K.TELEGRAM: "Telegram",
    K.EMAIL: "email",
    K.SLACK_DM: "Slack direct message",
    K.WEBHOOK: "webhook",
}
_KINDS_BY_WORD = {word: kind for kind, word in KIND_WORDS.items()}
# contact_method_test's English outcomes (pager/texts.py "pager.test.*").
_TEST_FAILED = re.compile(r"Failed: (?P<detail>.*)", re.S)
_TEST_SENT = re.compile(
    r"Sent through (?P<word>.+?) \((?P<address>.*)\) at (?P<time>\d{4}-\d\d-\d\d \d\d:\d\d) "
    r"UTC; check that it arrived\."
)
EXAMPLES: dict[str, str] = {
    K.NTFY: "ntfys://ntfy.sh/<your-secret-topic> or ntfy://ntfy.example.com/<topic>",
    K.PUSHOVER: "pover://<user key>@<application token>",
    K.GOTIFY: "gotifys://gotify.example.com/<application token>",
    K.SMS: "twilio://<account SID>:<auth token>@<from number>/<your number>",
    K.VOICE: "twilio://<account SID>:<auth token>@<from number>/<your number>?method=call",
    K.TELEGRAM: "tgram://<bot token>/<chat id>",
    K.EMAIL: "alice@example.com",
    K.SLACK_DM: "slack://<xoxb- bot token>/@alice or slack://<xoxb- bot token>/U012AB3CDE",
    K.WEBHOOK: "https://hooks.example.com/pages#secret=<signing key, 16+ characters>",
}
WEBHOOK_SECRET_MIN = 16
# console.outgoing's refusal of a host name that does not resolve (its message id).
_UNRESOLVED = "%(host)s does not resolve (%(error)s); check the host name."
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*)://")
_SLACK_MEMBER = re.compile(r"^(@[\w.\-]+|[UW][A-Z0-9]{6,})$")


class AddressInvalid(DomainError):
    code = "invalid"


def _refuse(message: str, kind: str, **params: object) -> AddressInvalid:
    return AddressInvalid(
        message,
        params={"kind": KIND_WORDS.get(kind, kind), "example": EXAMPLES.get(kind, ""), **params},
    )


# --- showing an address -------------------------------------------------------------------
def address_masked(kind: str, address: str) -> str:
    """What may be shown of an address: the scheme and host (a hosted service's own
    domain when the URL's "host" is really a token), an email's domain."""
    address = (address or "").strip()
    if kind == K.EMAIL:
        local, _, domain = address.rpartition("@")
        return f"{local[:1]}…@{domain}" if local else "…"
    parts = _split(address)
    scheme = _scheme(address)
    if kind == K.WEBHOOK:
        host = parts.hostname if parts else None
        return f"{scheme}://{_host_port(parts)}" if scheme and host else "…"
    plugin = apprise.Apprise.instantiate(address) if scheme else None
    if plugin is None:
        return f"{scheme}://…" if scheme else "…"
    return f"{scheme}://{_apprise_host(plugin, parts)}"


def _scheme(address: str) -> str:
    # Not urlsplit's: apprise URLs are not all valid URLs (a Telegram bot token sits
    # where a port would be).
    found = _SCHEME.match(address)
    return found.group(1).lower() if found else ""


def _split(address: str) -> SplitResult | None:
    try:
        parts = urlsplit(address)
        parts.port  # noqa: B018  (raises on a bad port)
    except ValueError:
        return None
    return parts


def _host_port(parts: SplitResult | None) -> str:
    if parts is None or not parts.hostname:
        return "…"
    return f"{parts.hostname}:{parts.port}" if parts.port else parts.hostname


def _vendor(plugin: object) -> str:
    vendor = urlsplit(str(getattr(plugin, "service_url", "") or "")).hostname or ""
    return vendor.removeprefix("www.")


def _self_hosted(plugin: object) -> bool:
    """A plugin with a plain-http scheme talks to a server the user names (ntfy, Gotify,
    SMSEagle, signal-cli) unless it is the vendor's own (ntfy.sh); the others call their
    vendor, and what sits in their URL's host position is a token or a phone number."""
    host = str(getattr(plugin, "host", None) or "").lower()
    return bool(getattr(plugin, "protocol", None)) and bool(host) and host != _vendor(plugin)


def _apprise_host(plugin: object, parts: SplitResult | None) -> str:
    if _self_hosted(plugin):
        return _host_port(parts)
    return _vendor(plugin) or "…"


# --- checking an address ------------------------------------------------------------------
def address_check(kind: str, address: str, *, resolve: bool = True) -> str:
    """The address as stored (trimmed), or AddressInvalid / OutgoingRefused with what to
    fix. With `resolve`, a webhook's or self-hosted server's name is resolved (DNS) and
    refused if internal: call it outside a transaction. Without (the admin's form), every
    check but that one."""
    if kind not in ContactKind.values:
        raise AddressInvalid(
            gettext_noop("Unknown contact method kind %(kind)s."), params={"kind": repr(kind)}
        )
    address = (address or "").strip()
    if not address:
        raise _refuse(gettext_noop("The %(kind)s address is empty; for example %(example)s."), kind)
    if kind == K.EMAIL:
        try:
            validate_email(address)
        except ValidationError:
            raise _refuse(
                gettext_noop("%(address)s is not an email address; for example %(example)s."),
                kind,
                address=repr(address[:60]),
            ) from None
        return address
    if kind == K.WEBHOOK:
        url, _secret = webhook_parts(address)
        if resolve:
            url_check(url)
        return address
    _apprise_check(kind, address, resolve=resolve)
    return address


def _apprise_check(kind: str, address: str, *, resolve: bool) -> None:
    parts = _split(address)
    scheme = _scheme(address)
    allowed = KIND_SCHEMES[kind]
    if scheme not in allowed:
        if kind in (K.SMS, K.VOICE):
            raise _refuse(
                gettext_noop(
                    "%(scheme)s is not one of the %(kind)s providers the pager sends through "
                    "(%(schemes)s); for example %(example)s."
                ),
                kind,
                scheme=repr(f"{scheme}://" if scheme else address[:12]),
                schemes=", ".join(sorted(allowed)),
            )
        raise _refuse(
            gettext_noop("A %(kind)s address starts with %(schemes)s; for example %(example)s."),
            kind,
            schemes=" or ".join(f"{s}://" for s in sorted(allowed)),
        )
    plugin = apprise.Apprise.instantiate(address)
    if plugin is None:
        raise _refuse(
            gettext_noop(
                "apprise cannot read this %(kind)s address (%(shown)s): a part is missing or "
                "malformed. The form is %(example)s."
            ),
            kind,
            shown=address_masked(kind, address),
        )
    _kind_rules(kind, plugin)
    if resolve and _self_hosted(plugin) and parts is not None:
        # The server the user named: refused now if it is internal, not at 3 a.m. A name
        # that does not resolve from here is let through (the worker may see another
        # DNS; the guard checks every connection anyway, and Test tells).
        web = "https" if getattr(plugin, "secure", False) else "http"
        try:
            url_check(urlunsplit((web, _host_port(parts), "/", "", "")))
        except OutgoingRefused as exc:
            if exc.message != _UNRESOLVED:
                raise


def _kind_rules(kind: str, plugin: object) -> None:
    method = str(getattr(plugin, "method", "") or "")
    if kind == K.VOICE and method != "call":
        raise _refuse(
            gettext_noop("A voice call needs ?method=call at the end; for example %(example)s."),
            kind,
        )
    if kind == K.SMS and method == "call":
        raise _refuse(
            gettext_noop("This address places a call (method=call): add it as a voice call."), kind
        )
    if kind == K.SLACK_DM:
        targets = [str(t) for t in getattr(plugin, "channels", None) or []]
        if getattr(plugin, "mode", "") != "bot" or len(targets) != 1:
            raise _refuse(
                gettext_noop(
                    "A Slack direct message needs a bot token (xoxb-…) and exactly one "
                    "person (@name or a member id); for example %(example)s."
                ),
                kind,
            )
        if not _SLACK_MEMBER.match(targets[0]):
            raise _refuse(
                gettext_noop(
                    "Slack direct messages go to one person (@name or a member id such as "
                    "U012AB3CDE), not a channel; for example %(example)s."
                ),
                kind,
            )
    if kind == K.TELEGRAM and not getattr(plugin, "targets", None):
        raise _refuse(
            gettext_noop("Add your chat id after the bot token; for example %(example)s."), kind
        )


def webhook_parts(address: str) -> tuple[str, str]:
    """(the URL to post to, without the fragment; the signing key)."""
    parts = check_url_form(address)  # OutgoingRefused: not http(s), credentials, no host
    fragment = dict(parse_qsl(parts.fragment, keep_blank_values=True))
    secret = fragment.get("secret", "")
    if len(secret) < WEBHOOK_SECRET_MIN:
        raise _refuse(
            gettext_noop(
                "A webhook needs a signing key of at least %(min)s characters after "
                "#secret= (the receiver checks the X-Console-Signature header with it); "
                "for example %(example)s."
            ),
            K.WEBHOOK,
            min=WEBHOOK_SECRET_MIN,
        )
    return urlunsplit(parts._replace(fragment="")), secret


# --- the URL a message is sent to ----------------------------------------------------------
# Options a page sets unless the person's URL says otherwise: wake them (priority).
_PRIORITY: dict[str, tuple[str, str]] = {
    K.NTFY: ("priority", "high"),
    K.PUSHOVER: ("priority", "high"),
    K.GOTIFY: ("priority", "8"),
}


def apprise_url(kind: str, address: str, *, timeout: float) -> str:
    """The person's URL with the options every page needs: plain text (apprise escapes
    the text for services with markup, so an alert label cannot ping @channel or inject
    HTML), no footer or icon, and socket timeouts a little past the overall deadline (so
    the deadline, which says so, is what ends a slow call)."""
    parts = urlsplit(address)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    if kind in _PRIORITY:
        name, value = _PRIORITY[kind]
        query.setdefault(name, value)
    socket_timeout = f"{timeout + 1:g}"
    query.update({"format": "text", "cto": socket_timeout, "rto": socket_timeout})
    if kind == K.SLACK_DM:
        query.update({"footer": "no", "image": "no"})
    return urlunsplit(parts._replace(query=urlencode(query)))


def contact_test_words(result: str) -> Msg | None:
    """A contact method's stored test outcome (English, last_test_result) as a text, so
    it is shown in the reader's language; None: not one the console wrote."""
    if found := _TEST_FAILED.fullmatch(result):
        return pager_msg("test.failed", detail=found["detail"])
    if found := _TEST_SENT.fullmatch(result):
        kind = _KINDS_BY_WORD.get(found["word"])
        words = method_words(kind) if kind else found["word"]
        return pager_msg("test.sent", method=words, address=found["address"], time=found["time"])
    return None
