"""`/incident`'s own commands from chat (chatops/actions/declare.py): declare, page a team
(with an incident, or declaring one the team owns), help."""

import pytest

from chatops.models import InteractionKind, InteractionStatus
from incidents.models import Incident, TimelineEvent
from pager.models import Team
from tests.factories import IncidentFactory
from tests.unit.chatops.core_helpers import answers, run

pytest_plugins = ["tests.unit.chatops.core_helpers"]
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("chat_env")]

S = InteractionStatus
CMD = InteractionKind.COMMAND


def test_declare(slack_server, slack_workspace, people, sent):
    done = run(slack_workspace, slack_server, "declare",
               {"severity": "SEV2", "title": "Checkout is down"}, kind=CMD)  # fmt: skip
    assert done.status == S.DONE
    incident = Incident.objects.get()
    assert (incident.title, incident.severity, incident.status) == (
        "Checkout is down",
        "SEV2",
        "triggered",
    )
    assert done.incident_id == incident.pk
    opened = TimelineEvent.objects.get(incident=incident, kind="incident_opened")
    assert (opened.source, opened.actor) == ("slack", people["rita"])
    assert f"Incident #{incident.pk} declared (SEV2): Checkout is down" in answers(slack_server)


def test_declare_by_a_viewer_is_refused(slack_server, slack_workspace, people, sent):
    refused = run(slack_workspace, slack_server, "declare", {"severity": "SEV3", "title": "x"},
                  user="UVIC", kind=CMD)  # fmt: skip
    assert refused.status == S.REFUSED
    assert not Incident.objects.exists()


def test_page_without_an_incident_declares_one_the_team_owns(
    slack_server, slack_workspace, people, sent
):
    Team.objects.create(slug="inference-sre", name="Inference SRE")
    done = run(slack_workspace, slack_server, "page",
               {"team": "inference-sre", "message": "GPUs are gone"}, kind=CMD)  # fmt: skip
    assert done.status == S.DONE
    incident = Incident.objects.get()
    assert incident.group_labels == {"team": "inference-sre"}
    assert incident.title == "GPUs are gone"
    unknown = run(slack_workspace, slack_server, "page", {"team": "nobody", "message": "hi"},
                  kind=CMD)  # fmt: skip
    assert unknown.status == S.REFUSED
    assert "There is no team 'nobody'." in answers(slack_server)[-1]


def test_page_a_team_with_nobody_on_call_says_so(slack_server, slack_workspace, people, sent):
    Team.objects.create(slug="inference-sre", name="Inference SRE")
    incident = IncidentFactory()
    refused = run(slack_workspace, slack_server, "page",
                  {"team": "inference-sre", "incident": incident.pk, "message": "help"},
                  kind=CMD)  # fmt: skip
    assert refused.status == S.REFUSED
    assert "Nobody is on call in team Inference SRE" in answers(slack_server)[-1]


def test_help(slack_server, slack_workspace, people, sent):
    assert run(slack_workspace, slack_server, "help", user="UNOBODY", kind=CMD).status == S.DONE
    told = answers(slack_server)[-1]
    assert "/incident declare" in told
    assert "Approve" in told
