"""One rule for a runbook's name wherever one arrives (incidents.rules.RUNBOOK_SLUG_RE):
an alert's `runbook` label, a responder's choice on the incident, a catalogue file. A
name one of them accepts, the others accept too."""

from datetime import UTC, datetime

import pytest
import yaml

from console import roles
from console.errors import DomainError
from incidents.ingest.decide import runbook_slug
from incidents.ingest.parse import ParsedAlert
from incidents.services import incident_runbook_set
from runbooks.catalog import load_catalog
from runbooks.schema import CatalogError
from tests.factories import IncidentFactory

NOT_NAMES = ["my_runbook", "ttft spike", "ünïcode", "a" * 101]


def _alert(label: str) -> ParsedAlert:
    return ParsedAlert(
        fingerprint="f1",
        status="firing",
        labels={"alertname": "X", "runbook": label},
        annotations={},
        starts_at=datetime(2026, 1, 1, tzinfo=UTC),
        ends_at=None,
        generator_url="",
    )


@pytest.mark.parametrize("name", NOT_NAMES)
def test_an_alert_label_that_is_no_runbook_name_is_ignored(name):
    assert runbook_slug(_alert(name)) == ""


def test_an_alert_label_is_read_in_lowercase():
    assert runbook_slug(_alert(" TTFT-Spike ")) == "ttft-spike"


@pytest.mark.django_db
@pytest.mark.parametrize("name", NOT_NAMES)
def test_a_responder_cannot_set_what_an_alert_could_not(make_user, name):
    incident = IncidentFactory()
    with pytest.raises(DomainError, match="is not a runbook name"):
        incident_runbook_set(
            incident_id=incident.pk, actor=make_user("rita", roles.RESPONDER), slug=name
        )


def test_a_catalogue_file_named_outside_the_rule_is_refused(catalog_copy):
    old = catalog_copy.file("ttft-spike.yaml")
    doc = yaml.safe_load(old.read_text())
    doc["slug"] = "ttft_spike"
    catalog_copy.file("ttft_spike.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    old.unlink()
    with pytest.raises(CatalogError, match=r"ttft_spike\.yaml: slug: expected a runbook name"):
        load_catalog(catalog_copy.dir)
