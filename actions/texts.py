"""What the actions app writes about a run (console/texts/): its audit and timeline lines,
why it needs approval, the worker's failures and the preview's; the kinds' own texts are
in actions/kinds/texts.py. Imported by ActionsConfig.ready()."""

from django.utils.translation import gettext_noop, ngettext_lazy

from actions.kinds import texts as _kinds  # noqa: F401  (registry: the kinds' ids)
from console.texts import texts_register

texts_register(
    {
        # --- a run's audit event and timeline line ------------------------------------------
        "actions.run.label": gettext_noop("Action #%(id)s %(kind)s on %(target)s:"),
        "actions.run.requested": gettext_noop("Requested: %(summary)s."),
        "actions.run.undo_requested": gettext_noop(
            "Undo requested: %(summary)s (undoes #%(undo_of)s)."
        ),
        "actions.run.needs_approval": gettext_noop("Needs approval: %(reason)s"),
        "actions.run.params": gettext_noop("%(kind)s %(params)s"),
        "actions.run.approved": gettext_noop("Approved"),
        "actions.run.approved_note": gettext_noop("Approved: %(note)s"),
        "actions.run.rejected": gettext_noop("Rejected"),
        "actions.run.rejected_note": gettext_noop("Rejected: %(note)s"),
        "actions.run.cancelled": gettext_noop("Cancelled"),
        "actions.run.cancelled_note": gettext_noop("Cancelled: %(note)s"),
        "actions.run.started": gettext_noop("Started by the worker"),
        "actions.run.resumed": gettext_noop("Resumed after the worker %(worker)s was lost"),
        "actions.run.resumed_unknown": gettext_noop("Resumed after an unknown worker was lost"),
        "actions.run.retrying": gettext_noop(
            "Retrying %(what)s in %(delay)ss (attempt %(attempt)s/%(tries)s): %(detail)s"
        ),
        "actions.run.applying": gettext_noop("Applying: %(summary)s"),
        "actions.run.conflict": gettext_noop(
            "Conflict: %(target)s changed underneath (%(detail)s); re-reading and re-checking "
            "guardrails (retry %(retry)s/%(retries)s)"
        ),
        "actions.run.written": gettext_noop("Written; reading back"),
        "actions.run.failed": gettext_noop("Failed: %(reason)s"),
        "actions.run.succeeded": gettext_noop("Succeeded: %(summary)s; read back: %(detail)s"),
        "actions.run.succeeded_landed": gettext_noop(
            "Succeeded (the earlier write landed): %(summary)s; read back: %(detail)s"
        ),
        "actions.run.succeeded_resumed": gettext_noop(
            "Succeeded (the write had landed before the loss): %(summary)s; read back: %(detail)s"
        ),
        "actions.run.nothing_written": gettext_noop(
            "already in the desired state; nothing was written"
        ),
        # What the worker was doing when Kubernetes did not answer.
        "actions.step.read_target": gettext_noop("read the target"),
        "actions.step.write": gettext_noop("write"),
        "actions.step.read_back": gettext_noop("read back"),
        # --- why a second person must approve (each a sentence) -----------------------------
        "actions.approval.risky": gettext_noop("%(kind)s is a risky action."),
        "actions.approval.severity": gettext_noop("The incident is %(severity)s."),
        "actions.approval.concern": gettext_noop(
            "Incident #%(id)s (%(severity)s) is about %(subject)s."
        ),
        "actions.approval.more": ngettext_lazy(
            "%(count)s more open incident is about it.",
            "%(count)s more open incidents are about it.",
            "count",
        ),
        "actions.approval.then": gettext_noop("A commander other than the requester must approve."),
        "actions.approval.not_decided": gettext_noop("Not decided: %(detail)s"),
        "actions.approval.needs_labels": gettext_noop("Not decided: needs label %(labels)s"),
        # --- the preview ------------------------------------------------------------------
        "actions.preview.no_answer": gettext_noop(
            "Kubernetes did not answer (%(detail)s); the worker will retry."
        ),
        # --- the worker's failures --------------------------------------------------------
        "actions.error.lost": ngettext_lazy(
            "The worker running it was lost %(count)s time; gave up.",
            "The worker running it was lost %(count)s times; gave up.",
            "count",
        ),
        "actions.error.unavailable": gettext_noop(
            "Kubernetes API unavailable while trying to %(what)s, after %(tries)s attempts: "
            "%(detail)s"
        ),
        "actions.error.kept_changing": gettext_noop(
            "%(target)s kept changing underneath; gave up after %(retries)s retries."
        ),
        "actions.error.verify": gettext_noop("read-back check failed: %(detail)s"),
        "actions.error.interrupted": gettext_noop(
            "the worker was lost mid-run and %(target)s changed since (resourceVersion "
            "%(before)s -> %(now)s) without reaching the planned state, so it was not applied "
            "again. Check the current state and request a new run."
        ),
        "actions.error.timeout": gettext_noop("the run exceeded its time limit"),
        "actions.error.internal": gettext_noop("internal error: %(detail)s"),
        # --- Kubernetes' answers (its own words are the `detail`) ---------------------------
        "actions.k8s.forbidden": gettext_noop(
            "Kubernetes refused to %(verb)s %(resource)s (%(what)s): the console worker's "
            "ServiceAccount lacks the permission '%(verb)s %(resource)s' (see "
            "deploy/k8s/rbac.yaml). API server: %(detail)s"
        ),
        "actions.k8s.not_found": gettext_noop("%(what)s not found: %(detail)s"),
        "actions.k8s.conflict": gettext_noop(
            "%(what)s changed since it was read; re-read and retry (%(detail)s)"
        ),
        "actions.k8s.invalid": gettext_noop(
            "the API server rejected the change to %(what)s as invalid: %(detail)s"
        ),
        "actions.k8s.unauthorized": gettext_noop(
            "Kubernetes rejected the console's credentials (401) on %(verb)s %(resource)s: the "
            "token in KUBECONFIG is wrong or expired"
        ),
        "actions.k8s.answered": gettext_noop(
            "Kubernetes API answered %(status)s on %(verb)s %(resource)s: %(detail)s"
        ),
        "actions.k8s.no_talk": gettext_noop(
            "could not talk to the Kubernetes API (%(verb)s %(resource)s): %(detail)s"
        ),
        "actions.k8s.deadline": gettext_noop(
            "Kubernetes API at %(host)s did not answer within %(seconds)s s (%(verb)s %(resource)s)"
        ),
        "actions.k8s.not_json": gettext_noop(
            "Kubernetes API at %(host)s sent a body that is not JSON (%(verb)s %(resource)s)"
        ),
        "actions.k8s.unreachable": gettext_noop(
            "Kubernetes API at %(host)s could not be reached (%(detail)s) (%(verb)s %(resource)s)"
        ),
        "actions.k8s.failed": gettext_noop(
            "Kubernetes API at %(host)s failed: %(detail)s (%(verb)s %(resource)s)"
        ),
        "actions.k8s.no_file": gettext_noop(
            "Kubernetes is not configured: KUBECONFIG=%(file)s does not exist (start the "
            "simulator, or point KUBECONFIG at your cluster's kubeconfig)"
        ),
        "actions.k8s.not_configured": gettext_noop(
            "Kubernetes is not configured: set KUBECONFIG to a kubeconfig file, or run the "
            "worker inside the cluster with its ServiceAccount (deploy/k8s/rbac.yaml)"
        ),
        "actions.k8s.bad_config": gettext_noop(
            "Kubernetes config %(where)s could not be loaded: %(detail)s"
        ),
        # --- ConfigMap revisions (rollback_router_config) ------------------------------------
        "actions.revision.none": gettext_noop(
            "No revisions of %(where)s have been captured yet; the console keeps them from its "
            "first look at the ConfigMap onwards."
        ),
        "actions.revision.none_differs": gettext_noop(
            "No revision of %(where)s differs from the current config; choose a revision by "
            "its number on the actions page."
        ),
        "actions.revision.none_differs_before": gettext_noop(
            "No revision of %(where)s from before the incident differs from the current "
            "config; choose a revision by its number on the actions page."
        ),
        "actions.revision.spec": gettext_noop(
            "Use before_incident, previous or a revision number (e.g. 12)."
        ),
        "actions.revision.missing": gettext_noop("Revision %(id)s of %(where)s does not exist."),
    }
)
