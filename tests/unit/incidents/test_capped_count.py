"""The incident list, its API and the receipt log count matches only up to a cap (an
exact COUNT(*) of a year of incidents reads every row): past it they say "more than",
the API sets `count_capped`, and a render costs the same queries as below the cap."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone, translation
from django.utils.translation import gettext
from rest_framework.pagination import PageNumberPagination

from console import roles
from incidents import paging, views
from incidents.models import Incident, WebhookReceipt

pytestmark = pytest.mark.django_db

CAP = 4
LIST = "/api/v1/incidents/"
DASH = "\N{EN DASH}"  # between the range's numbers


@pytest.fixture
def small_cap(monkeypatch):
    monkeypatch.setattr(paging, "COUNT_CAP", CAP)
    monkeypatch.setattr(views, "COUNT_CAP", CAP)
    monkeypatch.setattr(views, "INCIDENTS_PER_PAGE", 2)
    monkeypatch.setattr(views, "RECEIPTS_PER_PAGE", 2)
    monkeypatch.setattr(PageNumberPagination, "page_size", 2)


def make_incidents(n: int, start: int = 0) -> None:
    now = timezone.now()
    for i in range(start, start + n):
        Incident.objects.create(
            title=f"VLLMHighTTFT ({i})",
            severity="SEV3",
            grouping_key=f"group-{i}",
            namespace="llm-serving",
            triggered_at=now - timedelta(minutes=i),
        )


def queries(client, url: str) -> tuple[int, object]:
    client.get(url)  # warm: session, permissions
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    return len(captured), response


def test_page_below_the_cap_counts_exactly(client, make_user, small_cap):
    client.force_login(make_user("vic", roles.VIEWER))
    make_incidents(3)
    body = client.get("/").content.decode()
    assert f"1{DASH}2 of 3" in body
    assert "Page 1 of 2" in body
    assert "Last »" in body
    assert 'data-testid="count-capped"' not in body


def test_page_past_the_cap_says_more_than_in_the_same_queries(client, make_user, small_cap):
    client.force_login(make_user("vic", roles.VIEWER))
    make_incidents(3)
    below, _ = queries(client, "/")
    make_incidents(20, start=3)
    past, response = queries(client, "/")
    body = response.content.decode()
    assert past == below
    assert f"1{DASH}2 of more than 4" in body
    assert 'data-testid="count-capped"' in body
    assert "Last »" not in body  # the last page is not known
    assert "?page=2" in body  # the next page still is
    last = client.get("/?page=2").content.decode()  # the cap's last page
    assert last.count('class="row-') == 2


def test_page_reads_right_in_chinese(client, make_user, small_cap):
    with translation.override("zh-hans"):
        if gettext("Page %(number)s") == "Page %(number)s":
            pytest.skip("zh_Hans catalogue not merged yet (/tmp/po/pages.po)")
    client.force_login(make_user("vic", roles.VIEWER))
    make_incidents(6)
    body = client.get("/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert f"第 1{DASH}2 条，共 4 多条" in body
    assert "第 1 页" in body


def test_api_count_is_exact_below_the_cap(client, make_user, small_cap):
    client.force_login(make_user("vic", roles.VIEWER))
    make_incidents(3)
    body = client.get(LIST).json()
    assert (body["count"], body["count_capped"]) == (3, False)
    assert len(body["results"]) == 2


def test_api_past_the_cap_says_so_in_the_same_queries(client, make_user, small_cap):
    client.force_login(make_user("vic", roles.VIEWER))
    make_incidents(3)
    below, _ = queries(client, LIST)
    make_incidents(20, start=3)
    past, response = queries(client, LIST)
    body = response.json()
    assert past == below
    assert (body["count"], body["count_capped"]) == (CAP, True)
    assert body["next"]
    assert body["previous"] is None
    # The filters count the same way: 23 match, 4 counted.
    assert client.get(LIST + "?status=open").json()["count_capped"] is True


def test_receipts_past_the_cap_say_more_than(client, make_user, small_cap):
    client.force_login(make_user("vic", roles.ADMIN))
    for _ in range(6):
        WebhookReceipt.objects.create(
            received_at=timezone.now(), body="{}", body_bytes=2, outcome="accepted", http_status=200
        )
    body = client.get("/receipts/").content.decode()
    assert f"1{DASH}2 of more than 4" in body
    assert "Page 1" in body
    assert "Page 1 of" not in body


def test_schema_documents_the_capped_count(client, make_user):
    client.force_login(make_user("vic", roles.VIEWER))
    schema = client.get("/api/schema/?format=json").json()
    listed = schema["paths"]["/api/v1/incidents/"]["get"]["responses"]["200"]
    ref = listed["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    properties = schema["components"]["schemas"][ref]["properties"]
    assert properties["count_capped"]["type"] == "boolean"
    assert "10,000" in properties["count"]["description"]


def test_a_search_counts_to_its_own_lower_cap(client, make_user, small_cap, monkeypatch):
    monkeypatch.setattr(paging, "SEARCH_COUNT_CAP", 3)
    monkeypatch.setattr(views, "SEARCH_COUNT_CAP", 3)
    client.force_login(make_user("vic", roles.VIEWER))
    make_incidents(6)
    assert f"1{DASH}2 of more than 3" in client.get("/?q=VLLM").content.decode()
    body = client.get(LIST + "?q=VLLM").json()
    assert (body["count"], body["count_capped"]) == (3, True)
    assert client.get(LIST + "?q=(5)").json() | {"results": []} == {
        "count": 1, "count_capped": False, "next": None, "previous": None, "results": [],
    }  # fmt: skip
