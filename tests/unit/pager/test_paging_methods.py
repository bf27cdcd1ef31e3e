"""Contact methods: which addresses each kind takes (and the message when one is wrong),
how an address is shown (never its token), who may change whose, the audit, the order,
and the Test button."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import apprise
import pytest
from django.core.exceptions import PermissionDenied

from console import roles
from console.audit.models import AuditEvent
from console.outgoing import OutgoingRefused
from pager.models import ContactKind, ContactMethod
from pager.paging.methods import (
    SMS_SCHEMES,
    VOICE_SCHEMES,
    AddressInvalid,
    address_check,
    address_masked,
    apprise_url,
)
from pager.paging.services import (
    contact_method_create,
    contact_method_delete,
    contact_method_move,
    contact_method_test,
    contact_method_update,
)
from tests.pager_receivers import ntfy_url

pytest_plugins = ["tests.pager_receivers"]

K = ContactKind
TG_TOKEN = "123456789:ABCdefGhIJKlmnopqrstu-vwxyz12345"
TWILIO = "twilio://AC0123456789abcdef0123456789abcdef:AuthTok3nSecret@15551234567/15557654321"
SLACK = "slack://xoxb-1234-1234-abc124secret"


@pytest.mark.parametrize(
    ("kind", "address"),
    [
        (K.NTFY, "ntfys://ntfy.sh/alice-secret-topic"),
        (K.NTFY, "ntfys://ntfy.invalid/alice-topic"),  # does not resolve from here: saved
        (K.NTFY, "ntfy://alice-secret-topic"),
        (K.PUSHOVER, "pover://ukey1234@apptoken5678"),
        (K.TELEGRAM, f"tgram://{TG_TOKEN}/987654"),
        (K.SLACK_DM, f"{SLACK}/@alice"),
        (K.SLACK_DM, f"{SLACK}/U012AB3CDE"),
        (K.SMS, TWILIO),
        (K.VOICE, f"{TWILIO}?method=call"),
        (K.EMAIL, "alice@example.com"),
    ],
)
def test_a_well_formed_address_is_accepted(kind, address):
    assert address_check(kind, f"  {address} ") == address


@pytest.mark.parametrize(
    ("kind", "address", "says"),
    [
        (K.NTFY, "https://ntfy.sh/topic", "starts with ntfy:// or ntfys://"),
        (K.NTFY, "", "is empty"),
        (K.GOTIFY, "gotify://", "apprise cannot read this Gotify address"),
        (K.SMS, "discord://webhook_id/webhook_token", "not one of the SMS providers"),
        (K.SMS, f"{TWILIO}?method=call", "add it as a voice call"),
        (K.VOICE, TWILIO, "needs ?method=call"),
        (K.VOICE, "vonage://key:secret@15551234567", "not one of the voice call providers"),
        (K.SLACK_DM, f"{SLACK}/#general", "not a channel"),
        (K.SLACK_DM, "slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ/@alice", "bot token"),
        (K.TELEGRAM, f"tgram://{TG_TOKEN}/", "chat id"),
        (K.EMAIL, "alice at example", "is not an email address"),
        (K.WEBHOOK, "https://hooks.example.com/pages", "signing key of at least 16"),
        (K.WEBHOOK, "https://hooks.example.com/pages#secret=short", "signing key of at least 16"),
        ("pager", "x", "Unknown contact method kind"),
    ],
)
def test_a_wrong_address_says_what_to_fix(kind, address, says):
    with pytest.raises(AddressInvalid) as refused:
        address_check(kind, address)
    assert says in str(refused.value)
    for secret in ("AuthTok3nSecret", TG_TOKEN, "abc124secret", "webhook_token"):
        assert secret not in str(refused.value)


def test_an_internal_server_is_refused_when_saved(settings):
    settings.OUTGOING_URL_ALLOWLIST = ""
    with pytest.raises(OutgoingRefused):
        address_check(K.NTFY, "ntfy://127.0.0.1:8080/topic")
    with pytest.raises(OutgoingRefused):
        address_check(K.WEBHOOK, "http://127.0.0.1:9/hook#secret=0123456789abcdef")
    # The admin's form checks all but the addresses (it saves inside a transaction).
    assert address_check(K.NTFY, "ntfy://127.0.0.1:8080/topic", resolve=False)
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"  # the operator admits it on purpose
    assert address_check(K.NTFY, "ntfy://127.0.0.1:8080/topic")


def test_the_sms_and_voice_providers_are_apprise_plugins():
    known = set()
    for schema in apprise.Apprise().details()["schemas"]:
        known |= set(schema.get("protocols") or ()) | set(schema.get("secure_protocols") or ())
    assert known >= SMS_SCHEMES
    assert known >= VOICE_SCHEMES


@pytest.mark.parametrize(
    ("kind", "address", "shown"),
    [
        (K.NTFY, "ntfys://ntfy.sh/alice-secret-topic", "ntfys://ntfy.sh"),
        (K.NTFY, "ntfy://alice-secret-topic", "ntfy://ntfy.sh"),
        (K.NTFY, "ntfys://user:pw@push.example.com:8443/topic", "ntfys://push.example.com:8443"),
        (K.GOTIFY, "gotifys://push.example.com/path/Tok3nAbc", "gotifys://push.example.com"),
        (K.PUSHOVER, "pover://ukey1234@apptoken5678", "pover://pushover.net"),
        (K.TELEGRAM, f"tgram://{TG_TOKEN}/987654", "tgram://telegram.org"),
        (K.SLACK_DM, f"{SLACK}/@alice", "slack://slack.com"),
        (K.SMS, TWILIO, "twilio://twilio.com"),
        (K.EMAIL, "alice@example.com", "a…@example.com"),
        (K.WEBHOOK, "https://hooks.example.com/t0ken/path#secret=x", "https://hooks.example.com"),
        (K.GOTIFY, "gotify://", "gotify://…"),
    ],
)
def test_an_address_is_shown_as_scheme_and_host_only(kind, address, shown):
    assert address_masked(kind, address) == shown


def test_the_sent_url_keeps_the_persons_options_and_asks_for_plain_text():
    url = apprise_url(K.NTFY, "ntfys://ntfy.sh/topic?priority=max&token=tk_abc", timeout=10)
    query = parse_qs(urlsplit(url).query)
    assert query["priority"] == ["max"]  # theirs wins over the page's "high"
    assert query["token"] == ["tk_abc"]
    assert query["format"] == ["text"]
    assert query["cto"] == query["rto"] == ["11"]


# --- services --------------------------------------------------------------------------------


@pytest.fixture
def people(make_user):
    return {
        "vic": make_user("vic", roles.VIEWER),
        "rita": make_user("rita", roles.RESPONDER),
        "cara": make_user("cara", roles.COMMANDER),
    }


@pytest.mark.django_db
def test_a_responder_adds_their_own_methods_in_order_and_the_audit_keeps_no_token(people):
    rita = people["rita"]
    first = contact_method_create(
        actor=rita, user_id=rita.pk, kind=K.TELEGRAM, address=f"tgram://{TG_TOKEN}/987654"
    )
    second = contact_method_create(
        actor=rita, user_id=rita.pk, kind=K.EMAIL, address="rita@example.com", label="work"
    )

    assert (first.position, second.position) == (1, 2)
    assert ContactMethod.objects.get(pk=first.pk).address == f"tgram://{TG_TOKEN}/987654"
    rows = list(AuditEvent.objects.filter(kind="contact_method").order_by("id"))
    assert [r.reason for r in rows] == [
        f"added Telegram contact method #{first.pk} of rita",
        f"added email contact method #{second.pk} of rita",
    ]
    assert rows[0].new["address"] == "tgram://telegram.org"
    assert rows[0].user == rita
    assert TG_TOKEN not in str([(r.old, r.new, r.reason) for r in rows])


@pytest.mark.django_db
def test_only_a_commander_manages_other_peoples_methods(people):
    rita, cara, vic = people["rita"], people["cara"], people["vic"]
    with pytest.raises(PermissionDenied):
        contact_method_create(actor=rita, user_id=cara.pk, kind=K.EMAIL, address="c@example.com")
    with pytest.raises(PermissionDenied):
        contact_method_create(actor=vic, user_id=vic.pk, kind=K.EMAIL, address="v@example.com")
    method = contact_method_create(
        actor=cara, user_id=rita.pk, kind=K.EMAIL, address="rita@example.com"
    )
    assert method.user == rita
    with pytest.raises(PermissionDenied):
        contact_method_update(actor=vic, method_id=method.pk, label="x")
    contact_method_update(actor=rita, method_id=method.pk, label="phone", enabled=False)
    method.refresh_from_db()
    assert (method.label, method.enabled) == ("phone", False)


@pytest.mark.django_db
def test_changing_the_kind_needs_the_address_again(people):
    rita = people["rita"]
    method = contact_method_create(
        actor=rita, user_id=rita.pk, kind=K.EMAIL, address="rita@example.com"
    )
    with pytest.raises(AddressInvalid):
        contact_method_update(actor=rita, method_id=method.pk, address="not an address")
    contact_method_update(
        actor=rita, method_id=method.pk, kind=K.NTFY, address="ntfys://ntfy.sh/rita-topic"
    )
    method.refresh_from_db()
    assert (method.kind, method.address) == (K.NTFY, "ntfys://ntfy.sh/rita-topic")


@pytest.mark.django_db
def test_moving_and_removing_methods(people):
    rita = people["rita"]
    made = [
        contact_method_create(actor=rita, user_id=rita.pk, kind=K.EMAIL, address=f"r{n}@ex.com")
        for n in range(3)
    ]

    order = contact_method_move(actor=rita, method_id=made[2].pk, position=1)

    assert [m.pk for m in order] == [made[2].pk, made[0].pk, made[1].pk]
    rows = ContactMethod.objects.filter(user=rita).order_by("position")
    assert list(rows.values_list("pk", "position")) == [
        (made[2].pk, 1),
        (made[0].pk, 2),
        (made[1].pk, 3),
    ]
    contact_method_delete(actor=rita, method_id=made[0].pk)
    assert not ContactMethod.objects.filter(pk=made[0].pk).exists()
    assert AuditEvent.objects.filter(kind="contact_method", reason__startswith="removed").exists()


@pytest.mark.django_db
def test_the_test_button_sends_through_that_method_and_records_it(people, ntfy):
    rita = people["rita"]
    method = contact_method_create(
        actor=rita, user_id=rita.pk, kind=K.NTFY, address=ntfy_url(ntfy, "rita-test")
    )

    result = contact_method_test(method_id=method.pk, actor=rita)

    [message] = ntfy.messages["rita-test"]
    assert message["title"] == "Test page from the vLLM Incident Console"
    assert result.startswith(f"Sent through ntfy (ntfy://{ntfy.host})")
    method.refresh_from_db()
    assert method.last_test_at is not None
    assert method.last_test_result == result


@pytest.mark.django_db
def test_a_failed_test_says_why_without_the_token(people, gotify):
    rita = people["rita"]
    method = contact_method_create(
        actor=rita,
        user_id=rita.pk,
        kind=K.GOTIFY,
        address=f"gotify://{gotify.host}/NotTheRightTok3n",
    )

    result = contact_method_test(method_id=method.pk, actor=rita)

    assert result.startswith(f"Failed: Gotify (gotify://{gotify.host}) answered HTTP 401")
    assert "NotTheRightTok3n" not in result
    method.refresh_from_db()
    assert method.last_test_result == result
    with pytest.raises(PermissionDenied):
        contact_method_test(method_id=method.pk, actor=people["vic"])
