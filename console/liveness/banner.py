"""The banner on every page when no worker is alive or a queue has nobody, saying how
much work waits.

Console is the lowest layer and cannot count a higher app's work, so higher apps
register a counter for the banner ("M action runs are waiting") in their AppConfig.ready.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.utils.functional import Promise
from django.utils.translation import gettext as _

from console.liveness.selectors import WorkerLiveness


@dataclass(frozen=True)
class WaitingWork:
    count: Callable[[], int]  # one query
    singular: str | Promise  # lazy (gettext_lazy) to be translated on the banner
    plural: str | Promise

    def describe(self) -> str:
        n = self.count()
        if n == 1:
            return _("1 %(what)s is waiting") % {"what": self.singular}
        if not n:
            return _("no %(what)s are waiting") % {"what": self.plural}
        return _("%(n)s %(what)s are waiting") % {"n": n, "what": self.plural}


_waiting_work: dict[str, WaitingWork] = {}


def waiting_work_register(
    *, count: Callable[[], int], singular: str | Promise, plural: str | Promise
) -> None:
    """Let the banner say how much work waits for a worker (idempotent by `plural`)."""
    _waiting_work[str(plural)] = WaitingWork(count=count, singular=singular, plural=plural)


def worker_banner_text(liveness: WorkerLiveness) -> str:
    """The page banner when no worker is alive or a queue has nobody (the notifier is
    gone: notifications wait), else ''. One query per registered counter, and none while
    a worker is alive."""
    if liveness.ok:
        problems = liveness.queue_problems
        return _("%(problem)s.") % {"problem": "; ".join(problems)} if problems else ""
    waiting = "; ".join(work.describe() for work in _waiting_work.values())
    if waiting:
        return _("%(problem)s; %(waiting)s.") % {"problem": liveness.problem, "waiting": waiting}
    return _("%(problem)s.") % {"problem": liveness.problem}
