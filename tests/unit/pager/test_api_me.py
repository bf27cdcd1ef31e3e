"""My contact methods over the API: the address goes in and never comes out (answers
show it masked), the order, the Test button against a real local ntfy server, and
someone else's method is not at my address."""

from __future__ import annotations

import pytest

from console import roles
from pager.models import ContactMethod
from tests.pager_receivers import contact, ntfy_url
from tests.unit.pager import test_api as base

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.pager_receivers"]

API = base.API + "me/contact-methods/"
api_as = base.api_as
TOPIC = "rita-pages-9x8s7d"  # the secret part of an ntfy address


def test_add_list_change_and_remove_a_method(api_as, ntfy):
    rita = api_as(roles.RESPONDER, "rita")
    address = ntfy_url(ntfy, TOPIC)
    r = rita.post(API, {"kind": "ntfy", "address": address, "label": "phone"}, format="json")
    assert r.status_code == 201, r.content
    made = r.json()
    assert "address" not in made
    assert TOPIC not in r.content.decode()
    assert made["address_shown"].startswith("ntfy://")
    assert (made["kind"], made["label"], made["position"], made["enabled"]) == (
        "ntfy", "phone", 1, True
    )  # fmt: skip
    assert ContactMethod.objects.get().address == address  # stored in full, encrypted
    r = rita.get(API)
    assert r.status_code == 200
    assert r.json()["count"] == 1
    assert TOPIC not in r.content.decode()
    r = rita.patch(f"{API}{made['id']}/", {"label": "work phone", "enabled": False}, format="json")
    assert r.status_code == 200, r.content
    assert (r.json()["label"], r.json()["enabled"]) == ("work phone", False)
    assert TOPIC not in r.content.decode()
    assert rita.delete(f"{API}{made['id']}/").status_code == 204
    assert not ContactMethod.objects.exists()


def test_bad_input_names_the_problem(api_as, ntfy):
    rita = api_as(roles.RESPONDER, "rita")
    r = rita.post(API, {"kind": "pigeon", "address": "coo"}, format="json")
    assert r.status_code == 400
    assert "kind" in r.json()
    r = rita.post(API, {"kind": "ntfy"}, format="json")
    assert r.status_code == 400
    assert "address" in r.json()
    r = rita.post(API, {"kind": "email", "address": "not an address"}, format="json")
    assert r.status_code == 400
    assert r.json()["code"] == "invalid"
    r = rita.post(API, {"kind": "webhook", "address": "ftp://hooks.example.com/x"}, format="json")
    assert r.status_code == 400
    assert "address" in r.json() or r.json()["code"] == "invalid"
    r = rita.post(API, {"kind": "ntfy", "address": "x" * 2001}, format="json")
    assert r.status_code == 400
    assert "address" in r.json()
    method = contact(rita.user, "ntfy", ntfy_url(ntfy, TOPIC))
    r = rita.patch(f"{API}{method.pk}/", {"kind": "email"}, format="json")
    assert r.status_code == 400
    assert "address again" in r.json()["detail"]
    r = rita.post(f"{API}{method.pk}/move/", {"position": 0}, format="json")
    assert r.status_code == 400
    assert "position" in r.json()


def test_reorder(api_as, ntfy):
    rita = api_as(roles.RESPONDER, "rita")
    first = contact(rita.user, "ntfy", ntfy_url(ntfy, "one-topic-123"))
    second = contact(rita.user, "email", "rita@example.com")
    third = contact(rita.user, "ntfy", ntfy_url(ntfy, "three-topic-123"))
    r = rita.post(f"{API}{third.pk}/move/", {"position": 1}, format="json")
    assert r.status_code == 200, r.content
    assert [(m["id"], m["position"]) for m in r.json()] == [
        (third.pk, 1), (first.pk, 2), (second.pk, 3)
    ]  # fmt: skip
    assert "three-topic" not in r.content.decode()


def test_the_test_button_sends_through_that_method(api_as, ntfy):
    rita = api_as(roles.RESPONDER, "rita")
    method = contact(rita.user, "ntfy", ntfy_url(ntfy, TOPIC))
    r = rita.post(f"{API}{method.pk}/test/")
    assert r.status_code == 200, r.content
    assert r.json()["result"].startswith("Sent")
    assert r.json()["method"]["last_test_result"] == r.json()["result"]
    assert TOPIC not in r.json()["result"]
    assert ntfy.requests  # the local ntfy server got the test message


def test_someone_elses_method_is_not_at_my_address(api_as, ntfy):
    rita, mia = api_as(roles.RESPONDER, "rita"), api_as(roles.COMMANDER, "mia")
    hers = contact(rita.user, "ntfy", ntfy_url(ntfy, TOPIC))
    # Even a commander (who may change anyone's through the pages) goes through
    # /me/ only for their own.
    assert mia.get(API).json()["count"] == 0
    for call in (
        lambda: mia.patch(f"{API}{hers.pk}/", {"label": "x"}, format="json"),
        lambda: mia.delete(f"{API}{hers.pk}/"),
        lambda: mia.post(f"{API}{hers.pk}/test/"),
        lambda: mia.post(f"{API}{hers.pk}/move/", {"position": 1}, format="json"),
        lambda: rita.delete(f"{API}{2**63}/"),
    ):
        r = call()
        assert r.status_code == 404
        assert "does not exist" in r.json()["detail"]
    assert ContactMethod.objects.get().label == ""


def test_viewers_have_no_contact_methods_here(api_as):
    viewer = api_as(roles.VIEWER)
    assert viewer.get(API).status_code == 403
