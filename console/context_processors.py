from typing import cast

from django.conf import settings
from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from console.liveness.banner import worker_banner_text
from console.liveness.selectors import WorkerLiveness, worker_liveness_get
from console.roles import user_roles


def console(request: HttpRequest):
    user = getattr(request, "user", None)
    context = {
        "user_roles": user_roles(user) if user is not None else [],
        "live_refresh_seconds": settings.LIVE_REFRESH_SECONDS,
    }
    if user is not None and user.is_authenticated:
        # Lazy: queried only by a template that shows them (base.html, a run's card), and
        # once per response however often they are used.
        liveness = SimpleLazyObject(worker_liveness_get)
        context["worker_liveness"] = liveness
        # The lazy object stands in for the WorkerLiveness it wraps.
        context["worker_banner"] = SimpleLazyObject(
            lambda: worker_banner_text(cast(WorkerLiveness, liveness))
        )
    return context
