"""Reads shared by the checklist pages and the API, each with a fixed number of queries
whatever the number of deployments, items or sign-offs."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from django.db.models import Prefetch, QuerySet
from django.utils import timezone
from django.utils.translation import pgettext

from console.bounds import MAX_ID
from console.texts import StoredParts, as_api, msg, render
from readiness import status
from readiness.items import CATALOGUE, DRILLS, ITEMS, PERSON, Item
from readiness.models import (
    ACTIVE_VERIFICATION,
    Deployment,
    ItemCheck,
    ItemState,
    SignOff,
    Verification,
)


@dataclass
class ItemRow:
    item: Item
    state: str
    rag: str
    summary: str  # English, as stored (or as the console words it now)
    evidence: list[str]  # English lines; a sign-off's note as typed
    checked_at: datetime | None  # when the console looked, or when a person signed
    signoff: SignOff | None = None
    history: list[SignOff] = field(default_factory=list)
    # The same texts as parts (console/texts/); None for a check stored before it had them.
    summary_parts: StoredParts | None = None
    evidence_parts: list[StoredParts] | None = None

    @property
    def state_label(self) -> str:
        return str(ItemState(self.state).label)

    @property
    def summary_shown(self) -> str:
        """The summary in the active language (as stored when it has no parts)."""
        return render(self.summary_parts, fallback=self.summary)

    @property
    def evidence_shown(self) -> list[str]:
        """The evidence lines in the active language (as stored without parts)."""
        parts = self._evidence_parts()
        if parts is None:
            return list(self.evidence)
        return [render(p, fallback=line) for p, line in zip(parts, self.evidence, strict=True)]

    @property
    def summary_i18n(self) -> list[dict[str, Any]] | None:
        return as_api(self.summary_parts)

    @property
    def evidence_i18n(self) -> list[list[dict[str, Any]] | None] | None:
        parts = self._evidence_parts()
        return None if parts is None else [as_api(p) for p in parts]

    def _evidence_parts(self) -> list[StoredParts] | None:
        # One parts list per stored line, or none at all: never half a translation.
        parts = self.evidence_parts
        if not isinstance(parts, list) or len(parts) != len(self.evidence):
            return None
        return parts

    @property
    def source_label(self) -> str:
        """Where the answer comes from, as the page names it (Kubernetes and Prometheus
        keep their names)."""
        shown = {
            CATALOGUE: pgettext("checklist item source", "catalogue"),
            DRILLS: pgettext("checklist item source", "drills"),
            PERSON: pgettext("checklist item source", "person"),
        }
        return shown.get(self.item.source, self.item.source)


@dataclass
class Checklist:
    deployment: Deployment
    rows: list[ItemRow]
    rag: str
    verification: Verification | None  # the one the rows come from
    active: Verification | None  # queued or running now

    @property
    def counts(self) -> dict[str, int]:
        return {rag: sum(r.rag == rag for r in self.rows) for rag in ("green", "amber", "red")}


def _rows(
    deployment: Deployment, checks: list[ItemCheck], signoffs: list[SignOff], today: date
) -> list[ItemRow]:
    by_item = {c.item: c for c in checks}
    history: dict[str, list[SignOff]] = {}
    for s in signoffs:  # newest first
        history.setdefault(s.item, []).append(s)
    checked_at = deployment.last_verification.finished_at if deployment.last_verification else None
    rows: list[ItemRow] = []
    state: str
    for item in ITEMS:
        if item.verified_by_console:
            check = by_item.get(item.key)
            if check is None:
                said = msg("readiness.not_verified")
                state, summary, evidence = ItemState.UNKNOWN, said.english, []
                parts: dict[str, Any] = {"summary": said.stored, "evidence": []}
            else:
                state, summary, evidence = check.state, check.summary, check.evidence
                parts = check.texts if isinstance(check.texts, dict) else {}
            rows.append(
                ItemRow(
                    item,
                    state,
                    status.RAG_OF_STATE[state],
                    summary,
                    evidence,
                    checked_at,
                    summary_parts=parts.get("summary"),
                    evidence_parts=parts.get("evidence"),
                )
            )
        else:
            past = history.get(item.key, [])
            latest = past[0] if past else None
            state, said = status.signoff_state(latest, today)
            rows.append(
                ItemRow(
                    item,
                    state,
                    status.RAG_OF_STATE[state],
                    said.english,
                    [latest.note] if latest else [],  # a person's words, shown as typed
                    latest.at if latest else None,
                    latest,
                    past,
                    summary_parts=said.stored,
                )
            )
    return rows


def _deployments() -> QuerySet[Deployment]:
    return Deployment.objects.select_related("last_verification").prefetch_related(
        Prefetch("last_verification__checks"),
        Prefetch("signoffs", queryset=SignOff.objects.select_related("by").order_by("-at", "-id")),
        Prefetch(
            "verifications",
            queryset=Verification.objects.filter(status__in=ACTIVE_VERIFICATION),
            to_attr="active_verifications",
        ),
    )


def _checklist(deployment: Deployment, today: date) -> Checklist:
    verification = deployment.last_verification
    checks = list(verification.checks.all()) if verification else []
    rows = _rows(deployment, checks, list(deployment.signoffs.all()), today)
    # Set by the Prefetch(to_attr=) in _deployments().
    queued: list[Verification] = getattr(deployment, "active_verifications", [])
    active = queued[0] if queued else None
    return Checklist(deployment, rows, status.overall([r.rag for r in rows]), verification, active)


def deployment_list(*, include_gone: bool = False) -> list[Checklist]:
    """Every deployment with its checklist, red first. Four queries."""
    qs = _deployments()
    if not include_gone:
        qs = qs.filter(present=True)
    today = timezone.localdate()
    lists = [_checklist(d, today) for d in qs]
    order = {"red": 0, "amber": 1, "green": 2}
    return sorted(lists, key=lambda c: (order[c.rag], c.deployment.namespace, c.deployment.lws))


def deployment_checklist(*, deployment_id: int) -> Checklist | None:
    """One deployment's checklist with every item's evidence and sign-off history, or
    None. Four queries."""
    if not 0 < deployment_id <= MAX_ID:
        return None
    deployment = _deployments().filter(pk=deployment_id).first()
    return _checklist(deployment, timezone.localdate()) if deployment else None


def verification_get(*, verification_id: int) -> Verification | None:
    if not 0 < verification_id <= MAX_ID:
        return None
    return (
        Verification.objects.select_related("deployment", "requested_by")
        .filter(pk=verification_id)
        .first()
    )
