"""The triage branch's recommended actions, ready to request, as the app that runs
actions fills them in.

runbooks decides which action kinds a branch recommends (the catalogue's decision tree);
what a client needs to request one (its parameters filled from the alert labels, whether
a second person must approve) is the actions app's business. runbooks never imports it:
ActionsConfig.ready() registers the function that builds them (actions/recommended.py),
and the triage API and auto-triage ask for them here. With none registered, nothing is
recommended.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Protocol

from django.core.exceptions import ImproperlyConfigured

from console.texts import as_api, render
from incidents.models import Alert, Incident
from runbooks.triage import TriageResult


@dataclass(frozen=True)
class RecommendedAction:
    index: int  # position in the runbook's emergency_actions: the button's `action`
    kind: str
    title: str
    why: str
    params: dict[str, Any]
    needs_labels: tuple[str, ...]  # placeholders no alert label fills (left as "{pod}")
    requires_approval: bool | None  # None: the parameters are not complete or not valid
    approval_reason: str  # English (chat and search read it)
    # Its parts (console/texts), worded in the reader's language where shown; None when
    # there is no reason.
    approval_reason_msg: list[list[Any]] | None = None

    @property
    def approval_reason_shown(self) -> str:
        """The reason in the active language (the page's, the request's)."""
        return render(self.approval_reason_msg, fallback=self.approval_reason)

    def as_api(self) -> dict[str, Any]:
        """The triage API's shape: `approval_reason` in the request's language and
        `approval_reason_i18n` (its ids and parameters) beside it."""
        data = {k: v for k, v in asdict(self).items() if k != "approval_reason_msg"}
        data["needs_labels"] = list(self.needs_labels)
        data["approval_reason"] = self.approval_reason_shown
        data["approval_reason_i18n"] = as_api(self.approval_reason_msg)
        return data


class Recommender(Protocol):
    def __call__(
        self, *, incident: Incident, result: TriageResult, alerts: list[Alert], approval: bool
    ) -> list[RecommendedAction]: ...


_RECOMMENDER: list[Recommender] = []  # at most one


def triage_recommender_register(recommender: Recommender) -> None:
    """Set the function that builds the recommended actions (registering the same one
    again is a no-op; another one is a configuration error)."""
    if _RECOMMENDER and _RECOMMENDER[0] is not recommender:
        raise ImproperlyConfigured("A triage recommender is already registered.")
    _RECOMMENDER[:] = [recommender]


def recommended_actions(
    *, incident: Incident, result: TriageResult, alerts: list[Alert], approval: bool = True
) -> list[RecommendedAction]:
    """`alerts`: the list incident_triage used (incident_alerts_firing_first). With
    `approval`, whether each needs a second person is decided (a query per complete
    action); without, `requires_approval` is None and nothing is queried."""
    if not _RECOMMENDER:
        return []
    return _RECOMMENDER[0](incident=incident, result=result, alerts=alerts, approval=approval)
