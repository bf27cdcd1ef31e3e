"""The incident's buttons and notes from chat (chatops/actions/incident.py), through the
incident services, as the mapped user, on the timeline as "slack"."""

import pytest

from chatops.models import ChatThread, InteractionStatus
from incidents.models import IncidentStatus, TimelineEvent
from tests.factories import AlertFactory, IncidentFactory
from tests.unit.chatops.core_helpers import answers, run

pytest_plugins = ["tests.unit.chatops.core_helpers"]
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("chat_env")]

S = InteractionStatus


def test_take_command(slack_server, slack_workspace, people, sent):
    incident = IncidentFactory()
    done = run(slack_workspace, slack_server, "command", {"incident": incident.pk})
    assert done.status == S.DONE
    incident.refresh_from_db()
    assert incident.commander == people["rita"]
    event = TimelineEvent.objects.get(incident=incident, kind="commander_changed")
    assert event.source == "slack"
    again = run(slack_workspace, slack_server, "command", {"incident": incident.pk})
    assert again.status == S.REFUSED
    # The seat is not free any more: the service asks for the commander's role.
    assert answers(slack_server)[-1] == (
        "Your role does not allow you to assign the incident commander."
    )


def test_a_note_in_an_incidents_own_channel_needs_no_number(
    slack_server, slack_workspace, people, sent
):
    incident = IncidentFactory()
    ChatThread.objects.create(incident=incident, workspace=slack_workspace, channel="CINC1",
                              own_channel=True, language="en")  # fmt: skip
    done = run(slack_workspace, slack_server, "note", {"text": "router restarted"},
               channel="CINC1")  # fmt: skip
    assert done.status == S.DONE
    assert done.incident_id == incident.pk
    note = TimelineEvent.objects.get(incident=incident, kind="note")
    assert (note.message, note.source, note.actor) == ("router restarted", "slack", people["rita"])
    elsewhere = run(slack_workspace, slack_server, "note", {"text": "where does it go?"})
    assert elsewhere.status == S.REFUSED
    assert "Which incident?" in answers(slack_server)[-1]


def test_status_lists_the_open_incidents(slack_server, slack_workspace, people, sent):
    shown = IncidentFactory(title="Queue too long")
    IncidentFactory(title="A rehearsal", is_drill=True)
    IncidentFactory(title="Over", status="resolved")
    run(slack_workspace, slack_server, "status", user="UNOBODY")
    told = answers(slack_server)[-1]
    assert f"#{shown.pk}" in told
    assert "Queue too long" in told
    assert "A rehearsal" not in told
    assert "Over" not in told


def test_resolve_with_nobody_in_command_asks_to_confirm(
    slack_server, slack_workspace, people, sent
):
    incident = IncidentFactory(severity="SEV2")
    asked = run(slack_workspace, slack_server, "resolve", {"incident": incident.pk}, user="UCARA",
                trigger=False)  # fmt: skip
    assert asked.status == S.REFUSED
    assert "nobody is in command" in answers(slack_server)[-1]
    confirmed = {"incident": incident.pk, "confirm_no_commander": True}
    done = run(slack_workspace, slack_server, "resolve", confirmed, user="UCARA")
    assert done.status == S.DONE
    incident.refresh_from_db()
    assert incident.status == IncidentStatus.RESOLVED


def test_mitigate_while_firing_opens_the_reason_dialog(slack_server, slack_workspace, people, sent):
    incident = IncidentFactory(severity="SEV3")
    AlertFactory(incident=incident)
    run(slack_workspace, slack_server, "mitigate", {"incident": incident.pk})
    (opened,) = slack_server.calls_to("views.open")
    assert "mitigate" in opened.body["view"]["private_metadata"]
    reason = {"incident": incident.pk, "confirm": True, "reason": "traffic drained"}
    assert run(slack_workspace, slack_server, "mitigate", reason).status == S.DONE
    incident.refresh_from_db()
    assert incident.status == IncidentStatus.MITIGATED


def test_silence_refusal_names_alertmanager(slack_server, slack_workspace, people, sent):
    incident = IncidentFactory()
    AlertFactory(incident=incident)
    # ALERTMANAGER_URL is a closed port in tests: the service's own refusal comes back.
    value = {"incident": incident.pk, "minutes": 60}
    refused = run(slack_workspace, slack_server, "silence", value, user="UCARA")
    assert refused.status == S.REFUSED
    assert "Alertmanager" in answers(slack_server)[-1]
    viewer = run(slack_workspace, slack_server, "silence", {"incident": incident.pk}, user="URITA")
    assert viewer.outcome == "Your role does not allow you to silence alerts."
