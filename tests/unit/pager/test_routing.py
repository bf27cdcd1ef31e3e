"""Routing: which team owns an incident (by its labels), and which policy pages for it."""

import pytest

from pager.models import EscalationPolicy, Ownership, Team
from pager.routing import route
from tests.factories import AlertFactory, IncidentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def teams():
    default_policy = EscalationPolicy.objects.create(name="everyone", is_default=True)
    infer_policy = EscalationPolicy.objects.create(name="inference")
    infer = Team.objects.create(slug="infer", name="Inference", escalation_policy=infer_policy)
    llama = Team.objects.create(slug="llama", name="Llama owners")
    gpu = Team.objects.create(slug="gpu", name="GPU fleet")
    sre = Team.objects.create(slug="sre", name="SRE", is_default=True)
    Ownership.objects.create(team=infer, namespace="llm-prod-*")
    Ownership.objects.create(team=llama, namespace="llm-prod-*", model="llama-*")
    Ownership.objects.create(team=gpu, node_pool="h100-*")
    Ownership.objects.create(team=sre, runbook="gateway-*")
    return {
        "infer": infer,
        "llama": llama,
        "gpu": gpu,
        "sre": sre,
        "default_policy": default_policy,
        "infer_policy": infer_policy,
    }


def incident(namespace="llm-serving", runbook="ttft-spike", **group_labels):
    return IncidentFactory(namespace=namespace, runbook=runbook, group_labels=group_labels)


@pytest.mark.parametrize(
    ("labels", "team"),
    [
        # one label matched (namespace pattern)
        ({"namespace": "llm-prod-eu"}, "infer"),
        # two labels beat one: namespace and model
        ({"namespace": "llm-prod-eu", "model_name": "llama-3-70b"}, "llama"),
        # the `model` label counts like `model_name`
        ({"namespace": "llm-prod-eu", "model": "llama-3-8b"}, "llama"),
        # a claim matches only when every label it sets matches
        ({"namespace": "llm-staging", "model_name": "llama-3-70b"}, "sre"),
        # node pool
        ({"node_pool": "h100-spot"}, "gpu"),
        # patterns are case-sensitive shell patterns
        ({"namespace": "LLM-PROD-EU"}, "sre"),
        # the runbook is a label too
        ({"runbook": "gateway-5xx"}, "sre"),
        # nothing matches: the default team
        ({}, "sre"),
    ],
)
def test_the_claim_matching_the_most_labels_wins(teams, labels, team):
    namespace = labels.pop("namespace", "llm-serving")
    runbook = labels.pop("runbook", "ttft-spike")
    found = route(incident(namespace=namespace, runbook=runbook, **labels))
    assert found.team == teams[team]


def test_the_policy_is_the_teams_else_the_default_one(teams):
    assert route(incident(namespace="llm-prod-eu")).policy == teams["infer_policy"]
    llama = route(incident(namespace="llm-prod-eu", model_name="llama-3"))
    assert llama.policy == teams["default_policy"]
    assert "the team has no policy, so the default one" in llama.why
    assert "model=llama-*" in llama.why


def test_labels_come_from_the_alerts_when_the_group_has_none(teams):
    found = incident(namespace="llm-prod-eu")
    AlertFactory(incident=found, labels={"alertname": "X", "model_name": "llama-3-70b"})
    assert route(found).team == teams["llama"]
    pool = incident()
    AlertFactory(incident=pool, labels={"alertname": "GPUXid", "node_pool": "h100-a"})
    assert route(pool).team == teams["gpu"]


def test_any_alert_of_a_group_spanning_models_can_match(teams):
    found = incident(namespace="llm-prod-eu")
    AlertFactory(incident=found, labels={"model_name": "mistral-7b"})
    AlertFactory(incident=found, labels={"model_name": "llama-3-70b"})
    assert route(found).team == teams["llama"]


def test_an_explicit_team_label_names_the_team(teams):
    found = route(incident(namespace="llm-prod-eu", team="gpu"))
    assert found.team == teams["gpu"]
    assert "team=gpu" in found.why
    # An unknown team is ignored: routed by the labels.
    assert route(incident(namespace="llm-prod-eu", team="nobody")).team == teams["infer"]


def test_ties_go_to_the_older_claim(teams):
    Ownership.objects.create(team=teams["gpu"], namespace="llm-prod-*")
    assert route(incident(namespace="llm-prod-eu")).team == teams["infer"]


def test_nothing_configured_routes_nowhere():
    found = route(incident())
    assert found.team is None
    assert found.policy is None
    only_policy = EscalationPolicy.objects.create(name="all", is_default=True)
    assert route(incident()).policy == only_policy


def test_routing_costs_a_fixed_number_of_queries(teams, django_assert_num_queries):
    small = incident(namespace="llm-prod-eu")
    AlertFactory(incident=small, labels={"model_name": "llama-3"})
    # The alerts' labels, the claims, the default policy (the team has none).
    with django_assert_num_queries(3):
        assert route(small).team == teams["llama"]
    for n in range(30):
        team = Team.objects.create(slug=f"t{n}", name=f"T{n}")
        Ownership.objects.create(team=team, namespace=f"other-{n}", model=f"m{n}")
    big = incident(namespace="llm-prod-eu")
    for _ in range(20):
        AlertFactory(incident=big, labels={"model_name": "llama-3"})
    with django_assert_num_queries(3):
        assert route(big).team == teams["llama"]
    # The default team, then the default policy, when nothing matches.
    nobodys = incident(namespace="elsewhere")
    with django_assert_num_queries(4):
        assert route(nobodys).policy == teams["default_policy"]
