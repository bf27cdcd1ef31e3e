"""The year's people, webhook receipts, postmortems and action items."""

from __future__ import annotations

import random
from datetime import timedelta

from django.contrib.auth.models import Group, User

from console import roles
from postmortems.fleet_year import texts
from postmortems.fleet_year.clock import Clock, esc, opt
from postmortems.fleet_year.fleet import Fleet
from postmortems.fleet_year.plan import DAY, Inc
from postmortems.fleet_year.rows import AM_SEVERITY, PROMETHEUS, Alerts, Shape, dumps, fingerprint
from postmortems.models import DUE_BY_PRIORITY

# Who is on call in the generated year: (username, role). Commanders lead SEV1/SEV2s.
PEOPLE = (
    ("amara.okafor", roles.COMMANDER),
    ("li.wei", roles.COMMANDER),
    ("sofia.marquez", roles.COMMANDER),
    ("jonas.becker", roles.RESPONDER),
    ("priya.raman", roles.RESPONDER),
    ("kenji.sato", roles.RESPONDER),
    ("fatima.haddad", roles.RESPONDER),
    ("noah.kim", roles.RESPONDER),
    ("elena.popescu", roles.RESPONDER),
    ("mateo.rossi", roles.RESPONDER),
    ("zhang.min", roles.COMMANDER),
    ("olivia.brown", roles.RESPONDER),
)
RECEIPT_FIELDS = (
    "id",
    "received_at",
    "source",
    "remote_addr",
    "user_agent",
    "body",
    "body_bytes",
    "outcome",
    "http_status",
    "error",
    "error_field",
    "group_key",
    "alert_count",
    "incident_ids",
)
POSTMORTEM_FIELDS = (
    "id",
    "incident",
    "title",
    "status",
    "draft_state",
    "draft_error",
    "draft_language",
    "summary",
    "impact",
    "root_cause",
    "contributing_factors",
    "lessons_learned",
    "impact_data",
    "runbook",
    "category",
    "suggestions",
    "language",
    "created_by",
    "created_at",
    "updated_at",
    "drafted_at",
    "review_requested_at",
    "published_at",
    "published_by",
    "version",
    "revision",
    "published_revision",
)
ITEM_FIELDS = (
    "id",
    "title",
    "description",
    "owner",
    "due_date",
    "priority",
    "category",
    "status",
    "wont_do_reason",
    "incident",
    "postmortem",
    "external_url",
    "namespace",
    "runbook",
    "source",
    "created_by",
    "created_at",
    "updated_at",
    "closed_at",
)
PM_STATUSES = (("published", 55), ("in_review", 20), ("draft", 25))
ITEM_STATUSES = {
    "published": (("done", 50), ("in_progress", 15), ("open", 25), ("wont_do", 10)),
    "in_review": (("open", 70), ("in_progress", 30)),
    "draft": (("open", 100),),
}
N = "\\N"


def people_ensure(using: str) -> list[tuple[str, str]]:
    """The on-call people, made once (get_or_create): (user id as text, username)."""
    out = []
    for username, role in PEOPLE:
        user, made = User.objects.db_manager(using).get_or_create(
            username=username, defaults={"email": f"{username}@example.com"}
        )
        if made:
            user.set_unusable_password()
            user.save(using=using, update_fields=["password"])
            group = Group.objects.using(using).filter(name=role).first()
            if group is not None:
                user.groups.add(group)
        out.append((str(user.pk), username))
    return out


def receipt_line(inc: Inc, sh: Shape, al: Alerts, clock: Clock, gk: str, rid: int) -> str:
    """The notification that opened the incident, as Alertmanager posted it."""
    alerts = []
    for j in range(min(len(al.pods), 8)):
        p = al.pods[j]
        labels = {
            "alertname": sh.alertname,
            "cluster": sh.cluster,
            "lws": sh.lws_name,
            "namespace": sh.ns,
            "pod": sh.pods[p],
            "runbook": sh.runbook,
            "severity": AM_SEVERITY[inc.sev],
            "team": sh.team,
        }
        if sh.nodes:
            labels["node"] = sh.nodes[p]
        alerts.append(
            {
                "status": "firing",
                "labels": labels,
                "annotations": {"summary": sh.title, "runbook_url": f"/runbooks/{sh.runbook}/"},
                "startsAt": clock.iso(al.starts[j])[:-6] + "Z",
                "endsAt": "0001-01-01T00:00:00Z",
                "generatorURL": f"{PROMETHEUS}/graph?g0.expr={sh.alertname}",
                "fingerprint": fingerprint(inc.group, p),
            }
        )
    body = dumps(
        {
            "receiver": texts.RECEIVER,
            "status": "firing",
            "alerts": alerts,
            "groupLabels": {"alertname": sh.alertname, "lws": sh.lws_name, "namespace": sh.ns},
            "commonLabels": {"alertname": sh.alertname, "namespace": sh.ns, "lws": sh.lws_name},
            "commonAnnotations": {},
            "externalURL": texts.EXTERNAL_URL,
            "version": "4",
            "groupKey": gk,
            "truncatedAlerts": 0,
        }
    )
    addr = f"10.42.{inc.group % 250}.{inc.id % 250 + 1}"
    return "\t".join(
        (
            str(rid),
            clock.ts(inc.trig),
            "alertmanager",
            addr,
            "Alertmanager/0.27.0",
            esc(body),
            str(len(body.encode())),
            "accepted",
            "200",
            "",
            "",
            gk,
            str(len(alerts)),
            f"[{inc.id}]",
        )
    )


def _pick(rng: random.Random, weighted: tuple[tuple[str, int], ...]) -> str:
    return rng.choices([v for v, _ in weighted], weights=[w for _, w in weighted])[0]


def postmortem_candidates(incidents: list[Inc], end: int) -> list[Inc]:
    return [
        i
        for i in incidents
        if i.resolved and not i.drill and i.sev in ("SEV1", "SEV2") and i.resolved < end - DAY
    ]


def postmortem_lines(
    chosen: list[Inc],
    shapes: dict[int, tuple[Shape, int]],
    fleet: Fleet,
    clock: Clock,
    people: list[tuple[str, str]],
    seed: int,
    first_pm: int,
    first_item: int,
    end: int,
) -> tuple[list[str], list[str]]:
    """Postmortems of `chosen` (with the shape and alert count of each incident) and their
    1-5 action items each."""
    rng = random.Random(f"postmortems:{seed}")  # noqa: S311 (reproducible, not a secret)
    pms: list[str] = []
    items: list[str] = []
    kinds = {k.slug: k for k in fleet.kinds}
    for n, inc in enumerate(chosen):
        sh, pods = shapes[inc.id]
        pid = first_pm + n
        status = _pick(rng, PM_STATUSES)
        created = min(end - 3600, inc.resolved + rng.randint(3600, 3 * DAY))
        drafted = created + rng.randint(20, 300)
        review = drafted + rng.randint(3600, 2 * DAY) if status != "draft" else 0
        review = min(review, end - 600) if review else 0
        published = (
            min(review + rng.randint(3600, 3 * DAY), end - 300) if status == "published" else 0
        )
        author = people[inc.user][0]
        publisher = people[rng.randrange(3)][0] if published else N
        kind = kinds.get(sh.runbook)
        values = {
            "title": sh.title,
            "lws": sh.lws_name,
            "ns": sh.ns,
            "cluster": sh.cluster,
            "minutes": max(1, (inc.mitigated - inc.started) // 60),
            "pct": rng.randint(3, 60),
            "alerts": inc.n_alerts,
            "pods": pods,
            "detect": inc.trig - inc.started,
            "kind_title": kind.title if kind else sh.runbook,
            "slug": sh.runbook,
        }
        prose = [esc(texts.POSTMORTEM[s].format(**values)) for s in texts.POSTMORTEM]
        times = {
            "start": clock.iso(inc.started),
            "detected": clock.iso(inc.trig),
            "acknowledged": clock.iso(inc.acked or inc.resolved),
            "mitigated": clock.iso(inc.mitigated),
            "resolved": clock.iso(inc.resolved),
        }
        impact = {
            "times": times,
            "durations": {
                "detect": inc.trig - inc.started,
                "acknowledge": (inc.acked or inc.resolved) - inc.trig,
                "mitigate": inc.mitigated - inc.started,
                "resolve": inc.resolved - inc.started,
            },
            "alerts": {"total": inc.n_alerts, "by_name": {sh.alertname: inc.n_alerts}},
            "affected": {"namespace": [sh.ns], "lws": [sh.lws_name]},
            "affected_counts": {"namespace": 1, "lws": 1, "pod": pods},
            "severity": inc.sev,
            "reopened": max(0, len(inc.cycles) - 1),
        }
        revision = rng.randint(1, 6)
        updated = max(drafted, review, published)
        pms.append(
            "\t".join(
                (
                    str(pid),
                    str(inc.id),
                    f"Postmortem: {sh.title}"[:300],
                    status,
                    "ready",
                    "",
                    "en",
                    *prose,
                    dumps(impact),
                    sh.runbook,
                    kind.category if kind else "",
                    "[]",
                    "en",
                    author,
                    clock.ts(created),
                    clock.ts(updated),
                    clock.ts(drafted),
                    opt(clock, review),
                    opt(clock, published),
                    publisher,
                    str(revision + rng.randint(0, 4)),
                    str(revision),
                    str(revision) if published else N,
                )
            )
        )
        for _ in range(rng.randint(1, 5)):
            items.append(
                _item(
                    rng,
                    first_item + len(items),
                    inc,
                    sh,
                    pid,
                    status,
                    created,
                    values,
                    people,
                    clock,
                    end,
                )
            )
    return pms, items


def _item(
    rng: random.Random,
    iid: int,
    inc: Inc,
    sh: Shape,
    pid: int,
    pm_status: str,
    created: int,
    values: dict,
    people: list[tuple[str, str]],
    clock: Clock,
    end: int,
) -> str:
    category, priority, title = rng.choice(texts.ACTION_ITEMS)
    status = _pick(rng, ITEM_STATUSES[pm_status])
    at = created + rng.randint(600, DAY)
    at = min(at, end - 120)
    due = at + int(DUE_BY_PRIORITY[priority] / timedelta(seconds=1))
    closed = min(at + rng.randint(DAY, 60 * DAY), end - 60) if status in ("done", "wont_do") else 0
    owner = people[rng.randrange(len(people))][0] if rng.random() < 0.9 else N
    words = {**values, "kind": sh.alertname, "team": sh.team}
    return "\t".join(
        (
            str(iid),
            title.format(**words)[:300],
            f"From the postmortem of incident #{inc.id}.",
            owner,
            clock.date(due),
            priority,
            category,
            status,
            texts.WONT_DO if status == "wont_do" else "",
            str(inc.id),
            str(pid),
            "",
            sh.ns,
            sh.runbook,
            "",
            people[inc.user][0],
            clock.ts(at),
            clock.ts(max(at, closed)),
            opt(clock, closed),
        )
    )
