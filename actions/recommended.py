"""The triage branch's recommended actions as a client can request them in one call.

For each emergency action of the runbook whose kind the branch recommends: its number
(the page's button asks for `?action=<index>`), kind, title, the parameters filled from the
alert labels exactly as the confirmation dialog fills them (actions.forms), and
whether the approval policy wants a second person. A read: nothing is written, and the
cluster is not asked (the request, and a preview, read it and decide again).

runbooks' triage API and auto-triage ask for these through runbooks.recommendations, where
ActionsConfig.ready() registers `recommended_actions`.
"""

from __future__ import annotations

from typing import Any

from actions import (
    policy,
    texts,  # noqa: F401  (registry: the ids below)
)
from actions.forms import filled_params
from actions.kinds import KINDS, ActionError, kind_for
from console.texts import Msg, msg
from incidents.models import Alert, Incident
from runbooks.catalog import load_catalog
from runbooks.placeholders import missing
from runbooks.recommendations import RecommendedAction
from runbooks.triage import TriageResult, incident_labels


def _approval(
    kind: str, params: dict[str, Any], incident: Incident
) -> tuple[bool | None, Msg | None]:
    """(needed, why): RecommendedAction keeps `why` in English (chatops reads it) and as
    parts (pages and the triage API word it in the reader's language)."""
    try:
        action = kind_for(kind)
        clean = action.clean(dict(params))
    except ActionError as exc:
        return None, msg("actions.approval.not_decided", detail=exc.said)
    # current/plan None: the policy's answer before the cluster is read; a request reads
    # it and may add a reason (a large scale-down, a cordon that restarts other groups).
    needed, why = policy.approval_required(
        kind=action, kinds=KINDS, incident=incident, params=clean, current=None, plan=None
    )
    return needed, why


def recommended_actions(
    *, incident: Incident, result: TriageResult, alerts: list[Alert], approval: bool = True
) -> list[RecommendedAction]:
    """`alerts`: the list incident_triage used (incident_alerts_firing_first). With
    `approval`, one query per complete action (the policy's look for other open incidents
    about its target); without, `requires_approval` is None and nothing is queried."""
    runbook = load_catalog().get(result.runbook_slug) if result.runbook_slug else None
    if runbook is None:
        return []
    labels = incident_labels(incident, alerts)
    out = []
    for kind in result.recommended_actions:
        for index, action in enumerate(runbook.emergency_actions):
            if action.kind != kind:
                continue
            params = filled_params(action, labels)
            templates = [v for v in action.params.values() if isinstance(v, str)]
            needs = tuple(dict.fromkeys(n for v in templates for n in missing(v, labels)))
            reason: Msg | None = None
            if needs:
                required = None
                reason = msg("actions.approval.needs_labels", labels=", ".join(needs))
            elif approval:
                required, reason = _approval(kind, params, incident)
            else:
                required = None
            out.append(
                RecommendedAction(
                    index=index, kind=kind, title=action.title, why=action.why, params=params,
                    needs_labels=needs, requires_approval=required,
                    approval_reason=policy.reason_english(reason),
                    approval_reason_msg=reason.stored if reason is not None else None,
                )
            )  # fmt: skip
    return out
