import pytest

from incidents.models import Incident
from tests.payloads import alert, notification, resolved

pytestmark = pytest.mark.django_db


def test_first_flow(post_webhook):
    a = alert()
    r = post_webhook(notification([a]))
    assert r.status_code == 200, r.content
    r2 = post_webhook(notification([a]))
    assert r2.status_code == 200
    assert Incident.objects.count() == 1
    r3 = post_webhook(notification([resolved(a)]))
    assert r3.status_code == 200
    assert Incident.objects.get().status == "mitigated"
