"""The guard's words (ids "guard.*"), stored as ids and parameters (console/texts/): a
signal's evidence, a verdict's reason, the timeline lines of a watch, its undo and its
page. Imported by the guard modules that write them (they load with the actions app)."""

from __future__ import annotations

from django.utils.translation import gettext_noop, ngettext_lazy, pgettext_lazy

from console.texts import texts_register

texts_register(
    {
        # Pieces.
        "guard.list": gettext_noop("%(first)s; %(rest)s"),
        "guard.as_stored": gettext_noop("%(text)s"),  # a text stored before it had parts
        "guard.no_data": gettext_noop("no data"),
        "guard.what.change": gettext_noop("the change"),
        "guard.what.changed_pods": gettext_noop("the changed pods"),
        "guard.what.others": gettext_noop("the others"),
        "guard.pods.title": gettext_noop(
            "Restarting groups (changed pods against the unchanged ones)"
        ),
        "guard.verdict.passed": pgettext_lazy("guard verdict", "passed"),
        "guard.verdict.breached": pgettext_lazy("guard verdict", "breached"),
        "guard.verdict.unknown": pgettext_lazy("guard verdict", "unknown"),
        "guard.duration.seconds": gettext_noop("%(seconds)s s"),
        "guard.duration.minutes": gettext_noop("%(minutes)s min"),
        "guard.duration.minutes_seconds": gettext_noop("%(minutes)s min %(seconds)s s"),
        # A signal's threshold in words.
        "guard.threshold.pods": gettext_noop(
            "changed groups restarting, more of them than of the unchanged groups"
        ),
        "guard.threshold.availability": gettext_noop("burn rate above %(burn)sx of a %(slo)s SLO"),
        "guard.threshold.latency": gettext_noop("above %(ratio)sx the value before the change"),
        "guard.threshold.latency_floor": gettext_noop(
            "above %(ratio)sx the value before the change and above %(floor)s %(unit)s"
        ),
        "guard.threshold.quality": gettext_noop("%(comparator)s %(threshold)s"),
        # A reading in words.
        "guard.shown.availability": gettext_noop("burn rate %(burn)sx (error ratio %(ratio)s)"),
        "guard.shown.pods": gettext_noop("%(share)s of groups restarting"),
        "guard.shown.value": gettext_noop("%(value)s %(unit)s"),
        # A signal's state and why (GuardWatch.signals[i]["message"]).
        "guard.signal.not_evaluated": gettext_noop("not evaluated yet"),
        "guard.signal.needs_label": gettext_noop("needs label %(labels)s"),
        "guard.signal.no_data": gettext_noop("%(title)s: no data"),
        "guard.signal.no_baseline": gettext_noop(
            "%(title)s: no value from before the change to compare with"
        ),
        "guard.signal.latency_crossed": gettext_noop(
            "%(title)s = %(value)s %(unit)s crossed %(limit)s %(unit)s "
            "(%(ratio)sx the %(baseline)s %(unit)s before the change)"
        ),
        "guard.signal.latency_ok": gettext_noop(
            "%(title)s = %(value)s %(unit)s (limit %(limit)s %(unit)s)"
        ),
        "guard.signal.ok": gettext_noop("%(title)s: %(now)s"),
        "guard.signal.already_past": gettext_noop(
            "%(title)s: %(now)s, already past %(threshold)s before the change"
        ),
        "guard.signal.quality_no_baseline": gettext_noop(
            "%(title)s: %(now)s, and no value from before the change to compare"
        ),
        "guard.signal.crossed": gettext_noop(
            "%(title)s: %(now)s crossed the threshold (%(threshold)s)"
        ),
        "guard.signal.crossed_was": gettext_noop(
            "%(title)s: %(now)s crossed the threshold (%(threshold)s); %(before)s before the change"
        ),
        "guard.signal.settling": gettext_noop("%(title)s: %(now)s; settling, not counted yet"),
        "guard.signal.context": gettext_noop(
            "%(title)s: %(now)s; gateway-wide, not attributed to %(what)s"
        ),
        "guard.signal.excused": gettext_noop(
            "%(title)s: %(now)s; not blamed on the change: %(excuse)s"
        ),
        "guard.signal.detail": gettext_noop("%(message)s (%(detail)s)"),
        # The changed pods against the others.
        "guard.split.no_data_changed": gettext_noop("%(title)s: no data for %(what)s yet"),
        "guard.split.no_data_others": gettext_noop(
            "%(title)s: no data for %(others)s to compare %(what)s with"
        ),
        "guard.split.no_pod": gettext_noop("%(title)s: no pod of %(what)s yet"),
        "guard.split.both": gettext_noop("%(what)s %(changed)s against %(others)s %(unchanged)s"),
        "guard.split.latency_breach": gettext_noop(
            "%(title)s: %(both)s, above %(limit)s %(unit)s (%(ratio)sx %(others)s)"
        ),
        "guard.split.latency_ok": gettext_noop("%(title)s: %(both)s (limit %(limit)s %(unit)s)"),
        "guard.split.pods_breach": gettext_noop(
            "%(title)s: %(both)s; %(what)s restart more than %(others)s"
        ),
        "guard.split.ok": gettext_noop("%(title)s: %(both)s"),
        "guard.split.only_changed": gettext_noop(
            "%(title)s: %(both)s; only %(what)s crossed %(threshold)s"
        ),
        # What a breach is still to go through (judge.step).
        "guard.step.coincides": gettext_noop(
            "%(message)s, but %(coincides)s: a failure of its own may explain it, so it is "
            "not attributed to the change (check it yourself)"
        ),
        "guard.step.explained": gettext_noop(
            "%(message)s, but the demand rose %(rise)sx since the change (%(before)s -> "
            "%(now)s requests/s): the latency follows the load, not attributed to the change "
            "(check it yourself)"
        ),
        "guard.step.late": gettext_noop(
            "%(message)s, but only after %(healthy)s healthy checks since settling: a change "
            "acts at once, so a regression that starts later is not attributed to it (check "
            "it yourself)"
        ),
        "guard.step.pending": gettext_noop(
            "%(message)s (check %(streak)s of %(confirm)s before it counts)"
        ),
        "guard.step.improving": gettext_noop(
            "%(message)s, but improving across the last checks (%(trail)s): not counted"
        ),
        "guard.step.counts_split": gettext_noop(
            "%(message)s in %(streak)s checks in a row after settling"
        ),
        "guard.step.counts_trend": gettext_noop(
            "%(message)s in %(streak)s checks in a row after settling (%(trail)s), not improving"
        ),
        # Readings that could not be taken.
        "guard.error.prometheus": gettext_noop("Prometheus could not be read: %(detail)s"),
        "guard.pods.all_changed": gettext_noop(
            "every group has changed: no unchanged group to compare restarts with"
        ),
        "guard.pods.no_lws": gettext_noop("no namespace or LeaderWorkerSet to read the pods of"),
        "guard.pods.no_pod": gettext_noop("no pod of %(what)s yet"),
        "guard.pods.restarted": gettext_noop("%(hits)s of %(total)s groups"),
        "guard.pods.restarted_names": gettext_noop("%(hits)s of %(total)s groups (%(names)s)"),
        "guard.pods.detail": gettext_noop(
            "restarts in the last %(seconds)s s: changed %(changed)s; unchanged %(unchanged)s"
        ),
        "guard.pods.detail_waiting": gettext_noop(
            "restarts in the last %(seconds)s s: changed %(changed)s; unchanged "
            "%(unchanged)s; changed pods not ready: %(pods)s"
        ),
        # The signals' own alerts (guard/alerts.py).
        "guard.alert.excused": gettext_noop(
            "%(alert)s has fired in open incident #%(incident)s since %(time)s, before the change"
        ),
        "guard.alert.coincides": gettext_noop(
            "%(alert)s began at %(time)s, after the change, in incident #%(incident)s of its own"
        ),
        # Timeline lines of a watch.
        "guard.label.run": gettext_noop("Guard on action #%(run)s"),
        "guard.label.change": gettext_noop("Guard on the change to %(subject)s"),
        "guard.start.signal": gettext_noop("%(title)s (%(threshold)s)"),
        "guard.start.split": gettext_noop(
            "%(label)s: watching %(runbook)s's golden signals for %(window)s, the first "
            "%(settle)s to settle: %(signals)s. Each check judges %(what)s against %(others)s "
            "at the same time; gateway-wide signals are context. A regression caused by the "
            "change undoes it."
        ),
        "guard.start.trend": gettext_noop(
            "%(label)s: watching %(runbook)s's golden signals for %(window)s, the first "
            "%(settle)s to settle: %(signals)s. A regression must last and not be improving. "
            "A regression caused by the change undoes it."
        ),
        "guard.timeline.breached": gettext_noop("%(label)s breached: %(reason)s."),
        "guard.timeline.breached_not_counted": gettext_noop(
            "%(label)s breached: %(reason)s. Not counted: %(shown)s."
        ),
        "guard.timeline.cannot_judge": gettext_noop(
            "%(label)s: cannot judge the change now (%(error)s). Nothing is undone without "
            "data; the window goes on."
        ),
        "guard.timeline.readable": gettext_noop(
            "%(label)s: the signals can be read again; watching."
        ),
        "guard.timeline.verdict": gettext_noop("%(label)s: verdict %(verdict)s. %(reason)s"),
        # A verdict's reason (GuardWatch.verdict_reason).
        "guard.reason.late": gettext_noop(
            "%(signals)s. Nothing was undone: a person decides whether the change played a part."
        ),
        "guard.reason.pending": gettext_noop(
            "The window ended while %(signals)s. Not confirmed, so nothing was undone: check "
            "the golden signals yourself."
        ),
        "guard.reason.unknown": gettext_noop(
            "The signals could not be judged at %(unknown)s of %(checks)s checks (last: "
            "%(last)s); the change was neither confirmed nor undone. Check the golden signals "
            "yourself."
        ),
        "guard.reason.passed": ngettext_lazy(
            "No regression in %(count)s check over the window.",
            "No regression in %(count)s checks over the window.",
            "count",
        ),
        # What was done about a breach (guard/remedy.py).
        "guard.remedy.resolved": gettext_noop(
            "incident #%(incident)s is already resolved, so the guard does not undo on its "
            "own: reopen it and undo the change if the change is the cause"
        ),
        "guard.remedy.refused": gettext_noop("the automatic undo was refused: %(detail)s"),
        "guard.remedy.not_undoable": gettext_noop("%(kind)s cannot be undone"),
        "guard.remedy.no_revision": gettext_noop("the console has no earlier revision to restore"),
        "guard.remedy.undo": gettext_noop(
            "%(label)s: automatic undo requested as action #%(run)s."
        ),
        "guard.remedy.undo_waits": gettext_noop(
            "%(label)s: automatic undo requested as action #%(run)s; it waits for a "
            "commander's approval (%(reason)s)."
        ),
        "guard.remedy.page": gettext_noop(
            "%(label)s breached (%(reason)s) and %(why)s: paging the commander %(commander)s "
            "of incident #%(incident)s to decide."
        ),
        "guard.remedy.page_nobody": gettext_noop(
            "%(label)s breached (%(reason)s) and %(why)s: paging the commander of incident "
            "#%(incident)s to decide. Nobody commands this incident yet: take command."
        ),
        "guard.page.sent": gettext_noop("(Sent to the paging webhook.)"),
        "guard.page.refused": gettext_noop(
            "(The page could not be delivered to the paging webhook: %(detail)s)"
        ),
        "guard.page.failed": gettext_noop(
            "(The page could not be delivered to the paging webhook: %(error)s.)"
        ),
        "guard.page.answered": gettext_noop("(The paging webhook answered %(status)s.)"),
    }
)
