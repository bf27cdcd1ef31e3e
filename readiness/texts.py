"""What the checklist writes, as message ids (console/texts/): the verifiers' summaries and
evidence lines, the sign-off summaries, the verification errors it sets itself, and the
items' titles and explanations (for the API's `_i18n`). Names, Kubernetes paths and
values, PromQL and raw Kubernetes/Prometheus error text are parameters, never worded.

Imported by ReadinessConfig.ready() and by the modules that build these texts."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from django.utils.translation import gettext_noop, ngettext_lazy, pgettext_lazy

from console.texts import Msg, StoredParts, msg, texts_register
from readiness.items import ITEMS

texts_register(
    {
        # A list of phrases or names: "a, b, c" (a nested pair per comma).
        "readiness.list.more": pgettext_lazy("a list in a checklist text", "%(first)s, %(rest)s"),
        # Evidence: a field of a Kubernetes object and its value, shown as in the YAML.
        "readiness.evidence.field": gettext_noop("%(path)s: %(value)s"),
        "readiness.evidence.absent": gettext_noop("%(path)s: absent"),
        "readiness.env.pair": gettext_noop("%(name)s=%(value)s"),
        "readiness.value.unset": gettext_noop("(unset)"),
        "readiness.value.from_reference": gettext_noop("(from a reference)"),
        "readiness.value.no_series": gettext_noop("no series"),
        "readiness.value.no_runbook": gettext_noop("no runbook"),
        "readiness.value.runbook_unknown": gettext_noop("runbook ?"),
        # Where a verifier looked.
        "readiness.where.lws": gettext_noop("LeaderWorkerSet %(namespace)s/%(name)s"),
        "readiness.where.configmap": gettext_noop("ConfigMap %(namespace)s/%(name)s"),
        "readiness.where.checklist": gettext_noop("the checklist"),
        # A source that could not be read (the detail is the source's own words).
        "readiness.source.k8s_unreachable": gettext_noop(
            "Kubernetes API unreachable for %(what)s: %(detail)s"
        ),
        "readiness.source.lws_gone": gettext_noop(
            "%(what)s is no longer in the cluster (Kubernetes API answered 404)."
        ),
        "readiness.source.configmap_missing": gettext_noop("%(where)s does not exist."),
        "readiness.source.prometheus_unreachable": gettext_noop(
            "Prometheus unreachable: %(detail)s"
        ),
        "readiness.source.rules_unreadable": gettext_noop(
            "The alert rules in %(directory)s could not be read: %(detail)s"
        ),
        "readiness.source.catalogue_unloadable": gettext_noop(
            "The runbook catalogue could not be loaded: %(detail)s"
        ),
        # Router and gateway ConfigMaps (verifiers/config.py).
        "readiness.config.no_key": gettext_noop("%(where)s has no data key %(data_key)s"),
        "readiness.config.not_json": gettext_noop(
            "%(where)s %(data_key)s is not JSON (%(detail)s)"
        ),
        "readiness.config.not_object": gettext_noop("%(where)s %(data_key)s is not a JSON object"),
        "readiness.router.unreadable": gettext_noop(
            "The router config cannot be read: %(problem)s."
        ),
        "readiness.router.evidence": gettext_noop(
            "%(where)s %(data_key)s: routing_logic %(logic)s, fallback %(fallback)s"
        ),
        "readiness.router.roundrobin": gettext_noop("The router already routes round-robin."),
        "readiness.router.falls_back": gettext_noop(
            "The router falls back from %(logic)s to round-robin."
        ),
        "readiness.router.no_fallback": gettext_noop(
            "The router routes %(logic)s with no round-robin fallback: when its state is lost, "
            "routing fails instead of spreading requests."
        ),
        "readiness.gateway.unreadable": gettext_noop(
            "The gateway config cannot be read: %(problem)s."
        ),
        "readiness.limit.rps": gettext_noop("requests per second"),
        "readiness.limit.tokens": gettext_noop("tokens"),
        "readiness.limit.concurrency": gettext_noop("concurrency"),
        "readiness.gateway.evidence": gettext_noop("%(where)s %(what)s: %(shown)s"),
        "readiness.gateway.no_key": gettext_noop("no key (%(keys)s)"),
        "readiness.gateway.no_limit": gettext_noop("The gateway sets no limit on %(what)s."),
        "readiness.gateway.limited": gettext_noop(
            "The gateway limits requests per second, tokens and concurrency."
        ),
        "readiness.gateway.max_tokens_evidence": gettext_noop(
            "%(where)s %(data_key)s: max_tokens_cap=%(value)s"
        ),
        "readiness.gateway.no_cap": gettext_noop("The gateway does not cap max_tokens."),
        "readiness.gateway.cap": gettext_noop("The gateway caps max_tokens at %(cap)s."),
        # The LeaderWorkerSet's templates (verifiers/lws.py).
        "readiness.probe.http": gettext_noop("httpGet %(path)s port %(port)s"),
        "readiness.probe.no_handler": gettext_noop("no handler"),
        "readiness.probe.absent": gettext_noop(
            "No readinessProbe on the leader: traffic can reach it before the model is loaded."
        ),
        "readiness.probe.timing": gettext_noop(
            "initialDelaySeconds %(delay)s, periodSeconds %(period)s, failureThreshold %(failures)s"
        ),
        "readiness.probe.startup": gettext_noop("startupProbe: %(handler)s, window %(window)s s"),
        "readiness.probe.liveness": gettext_noop("livenessProbe window %(window)s s"),
        "readiness.probe.liveness_too_short": gettext_noop(
            "The livenessProbe gives up after %(live)s s, before a %(need)s s model load "
            "finishes: the pod is killed while loading."
        ),
        "readiness.probe.handler_missing": gettext_noop(
            "The readinessProbe has no handler (httpGet, exec, tcpSocket)."
        ),
        "readiness.probe.too_short": gettext_noop(
            "The %(which)s allows %(window)s s, less than the %(need)s s a model load takes "
            "(READINESS_MODEL_LOAD_SECONDS)."
        ),
        "readiness.probe.ok": gettext_noop(
            "readinessProbe on the leader (%(handler)s), %(window)s s allowed for a %(need)s s "
            "model load."
        ),
        "readiness.drain.grace_default": gettext_noop(
            "%(path)s: %(grace)s (Kubernetes' default; not set)"
        ),
        "readiness.drain.no_prestop": gettext_noop(
            "No preStop hook on the leader: SIGTERM arrives while the endpoint still gets "
            "traffic, and in-flight requests are cut."
        ),
        "readiness.drain.prestop_waits": gettext_noop(
            "preStop: waits %(seconds)s s for endpoints to drain"
        ),
        "readiness.drain.prestop_hook": gettext_noop("preStop: a hook"),
        "readiness.drain.prestop_too_long": gettext_noop(
            "The preStop wait (%(sleep)s s) uses the whole grace period (%(grace)s s): vLLM is "
            "killed before it can finish in-flight requests after SIGTERM."
        ),
        "readiness.drain.ok": gettext_noop(
            "preStop drains the endpoint, then %(left)s s remain for vLLM to finish in-flight "
            "requests after SIGTERM."
        ),
        "readiness.nccl.evidence": gettext_noop("%(path)s %(container)s: %(env)s"),
        "readiness.nccl.no_templates": gettext_noop("The LeaderWorkerSet has no pod templates."),
        "readiness.nccl.missing": gettext_noop(
            "%(env)s is not 1-3 in the %(templates)s: a hung NCCL collective stalls the group "
            "instead of failing fast."
        ),
        "readiness.nccl.ok": gettext_noop(
            "%(env)s set on every template: the NCCL watchdog aborts hung collectives."
        ),
        "readiness.oom.never": gettext_noop(
            "A pod template says restartPolicy %(policy)s: an OOM-killed pod stays down."
        ),
        "readiness.oom.alone": gettext_noop(
            "restartPolicy %(policy)s: an OOM-killed pod restarts alone and cannot rejoin its "
            "group's collectives; use %(wanted)s."
        ),
        "readiness.oom.ok": gettext_noop(
            "An OOM-killed pod restarts and brings its whole group back."
        ),
        "readiness.zone.evidence": gettext_noop(
            "%(path)s: topologyKey %(topology)s, maxSkew %(skew)s, whenUnsatisfiable %(when)s"
        ),
        "readiness.zone.none": gettext_noop(
            "No topologySpreadConstraint on %(topology)s: every group may land in one zone."
        ),
        "readiness.zone.ok": gettext_noop("Groups are spread across zones (%(topology)s)."),
        # Prometheus, the runbook catalogue, the drill history (verifiers/signals.py).
        "readiness.dcgm.evidence": gettext_noop("%(query)s = %(value)s"),
        "readiness.dcgm.missing": gettext_noop(
            "Prometheus has no %(metrics)s series for %(deployment)s: GPU faults on this pool "
            "would go unseen."
        ),
        "readiness.dcgm.ok": ngettext_lazy(
            "DCGM exporter series present for %(count)s GPU of the pool.",
            "DCGM exporter series present for %(count)s GPUs of the pool.",
            "count",
        ),
        "readiness.runbooks.no_alerts": gettext_noop(
            "The alert rules define no alerts, so nothing pages anyone."
        ),
        "readiness.runbooks.evidence": gettext_noop("%(alert)s (%(file)s) -> %(runbook)s"),
        "readiness.runbooks.missing": gettext_noop("No runbook answers %(alerts)s."),
        "readiness.runbooks.ok": ngettext_lazy(
            "The %(count)s alert has a runbook.",
            "Every one of the %(count)s alerts has a runbook.",
            "count",
        ),
        "readiness.drill.none": gettext_noop("No drill has passed against this deployment."),
        "readiness.drill.evidence_plan": gettext_noop(
            "drill run #%(id)s (%(runbook)s, plan %(plan)s) passed at %(at)s UTC"
        ),
        "readiness.drill.evidence": gettext_noop(
            "drill run #%(id)s (%(runbook)s) passed at %(at)s UTC"
        ),
        "readiness.drill.evidence_no_time": gettext_noop("drill run #%(id)s passed"),
        "readiness.drill.no_end": gettext_noop("The last passed drill has no end time."),
        "readiness.drill.too_old": gettext_noop(
            "The last passed drill is %(days)s days old (more than %(max)s)."
        ),
        "readiness.drill.ok": ngettext_lazy(
            "A drill passed %(days)s day ago.", "A drill passed %(days)s days ago.", "days"
        ),
        # Rows without a check, and the person-signed items (status.py, selectors.py).
        "readiness.not_verified": gettext_noop("Not verified yet."),
        "readiness.signoff.none": gettext_noop(
            "Not signed off yet: a commander signs it off with a note."
        ),
        "readiness.signoff.revoked": gettext_noop(
            "Sign-off revoked by %(who)s on %(day)s: %(note)s"
        ),
        "readiness.signoff.expired": gettext_noop(
            "Signed off by %(who)s on %(day)s; expired on %(until)s."
        ),
        "readiness.signoff.valid": gettext_noop(
            "Signed off by %(who)s on %(day)s, valid until %(until)s."
        ),
        # Verification.error, which has no parts column: the stable English below is
        # recognised when read (verification_error_parts).
        "readiness.verification.stale": gettext_noop("No worker finished it within %(seconds)s s."),
        "readiness.verification.crashed": gettext_noop(
            "The verification stopped on an error: %(detail)s"
        ),
    }
)
# The items' titles and explanations (marked in readiness/items.py): the API's _i18n.
texts_register({f"readiness.item.{i.key}.title": i.title for i in ITEMS})
texts_register({f"readiness.item.{i.key}.why": i.why for i in ITEMS})


def listing(values: Sequence[Any]) -> Any:
    """Phrases (Msg) or names as one parameter: "a, b, c" in the reader's language."""
    if len(values) == 1:
        return values[0]
    return msg("readiness.list.more", first=values[0], rest=listing(values[1:]))


def item_title(key: str) -> Msg:
    return msg(f"readiness.item.{key}.title")


def item_why(key: str) -> Msg:
    return msg(f"readiness.item.{key}.why")


def detail(exc: BaseException) -> Any:
    """An exception's words as a parameter: its parts when its module gives them (a
    `msg` attribute holding a Msg), else its raw text."""
    own = getattr(exc, "msg", None)
    if isinstance(own, Msg):
        return own
    return str(getattr(exc, "message", None) or exc)


STALE = "readiness.verification.stale"
CRASHED = "readiness.verification.crashed"
_STALE_RE = re.compile(r"No worker finished it within (\d+) s\.")
_CRASHED_PREFIX = "The verification stopped on an error: "


def verification_error_parts(error: str) -> StoredParts | None:
    """Verification.error as parts when the console wrote it in a known shape (it has no
    parts column); None for anything else, shown as stored."""
    if not error:
        return None
    stale = _STALE_RE.fullmatch(error)
    if stale:
        return msg(STALE, seconds=int(stale.group(1))).stored
    if error.startswith(_CRASHED_PREFIX):
        return msg(CRASHED, detail=error[len(_CRASHED_PREFIX) :]).stored
    return None
