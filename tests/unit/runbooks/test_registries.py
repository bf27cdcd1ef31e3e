"""runbooks imports no higher app (issue 24): actions and drills tell it, from their
AppConfig.ready(), which action kinds a runbook may name, how to build the triage
branch's recommended actions, and what the runbook page shows about drills."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from actions.kinds import KINDS
from actions.recommended import recommended_actions
from drills.views import runbook_drills_section
from runbooks import action_kinds, recommendations
from runbooks.action_kinds import ACTION_KINDS, action_kind_names, action_kinds_register
from runbooks.catalog import load_catalog
from runbooks.schema import CatalogError
from runbooks.sections import runbook_sections

SIX = (
    "scale_lws, set_enforce_eager, rollback_router_config, restart_lws_group, cordon_node, "
    "update_gateway_limits"
)


def test_the_catalogue_knows_the_six_kinds_actions_registered_in_their_order():
    assert action_kind_names() == tuple(KINDS)
    assert ", ".join(ACTION_KINDS) == SIX
    assert set(ACTION_KINDS.values()) == {"actions"}


def test_a_kind_nobody_registered_fails_with_the_message_it_always_had(catalog_copy):
    def rename(doc):
        doc["emergency_actions"][0]["kind"] = "rollback_router"

    catalog_copy.edit("prefix-cache-drop", rename)
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy.dir)
    assert str(err.value).endswith(
        f"prefix-cache-drop.yaml: emergency_actions[0].kind: expected one of {SIX}; "
        "got 'rollback_router'"
    )


def test_one_kind_has_one_app(monkeypatch):
    monkeypatch.setattr(action_kinds, "_KINDS", dict(action_kinds._KINDS))
    action_kinds_register(app="actions", names=["scale_lws"])  # again: a no-op
    with pytest.raises(ImproperlyConfigured, match="already registered by actions"):
        action_kinds_register(app="chaos", names=["scale_lws"])


def test_actions_builds_the_recommended_actions_and_drills_the_runbook_section():
    assert [recommended_actions] == recommendations._RECOMMENDER
    with pytest.raises(ImproperlyConfigured):
        recommendations.triage_recommender_register(lambda **kwargs: [])
    (drills,) = [s for s in runbook_sections() if s.key == "drills"]
    assert (drills.template, drills.context) == ("drills/_last_passed.html", runbook_drills_section)
