"""Checklist pages: the deployments list and one deployment's items. They read what the
last verification stored (no Kubernetes or Prometheus call on a page load); the buttons
queue a verification or record a sign-off through the services."""

from __future__ import annotations

from datetime import timedelta

from django.http import Http404
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRefresh

from console.bounds import parse_date
from console.errors import DomainError
from console.http import AuthedRequest
from console.web import console_view, perform
from readiness import selectors, services
from readiness.items import BY_KEY, SIGN_OFF_KEYS
from readiness.permissions import SIGN_OFF, VERIFY, VIEW

POLL_SECONDS = 2  # the verification banner polls this often while one is under way
DEFAULT_SIGNOFF_DAYS = 90


def _checklist(pk: int):
    checklist = selectors.deployment_checklist(deployment_id=pk)
    if checklist is None:
        raise Http404(f"Deployment #{pk} does not exist.")
    return checklist


@require_GET
@console_view(VIEW)
def deployment_list(request: AuthedRequest):
    return render(request, "readiness/list.html", {"checklists": selectors.deployment_list()})


@require_GET
@console_view(VIEW)
def deployment_detail(request: AuthedRequest, pk: int):
    checklist = _checklist(pk)
    context = {
        "checklist": checklist,
        "poll_seconds": POLL_SECONDS,
        "can_verify": request.user.has_perm(VERIFY) and checklist.deployment.present,
        "can_sign": request.user.has_perm(SIGN_OFF),
        "default_expiry": timezone.localdate() + timedelta(days=DEFAULT_SIGNOFF_DAYS),
        "min_expiry": timezone.localdate() + timedelta(days=1),
    }
    return render(request, "readiness/detail.html", context)


@require_GET
@console_view(VIEW)
def verification_banner(request: AuthedRequest, pk: int):
    """Polled while a verification is under way; reloads the page once it has finished."""
    checklist = _checklist(pk)
    if checklist.active is None:
        return HttpResponseClientRefresh()
    context = {"checklist": checklist, "poll_seconds": POLL_SECONDS}
    return render(request, "readiness/_verification.html", context)


def _run(request: AuthedRequest, pk: int, call, done: str):
    return perform(request, call, done=done, back=reverse("readiness:deployment", args=[pk]))


@require_POST
@console_view(VERIFY)
def deployment_verify(request: AuthedRequest, pk: int):
    return _run(
        request, pk,
        lambda: services.verification_request(deployment_id=pk, actor=request.user),
        _("Verification queued: the worker reads the cluster and Prometheus now."),
    )  # fmt: skip


def _item(request: AuthedRequest) -> str:
    item = request.POST.get("item", "")
    if item not in SIGN_OFF_KEYS:
        raise DomainError(
            gettext_noop("%(item)s is not an item a person signs off."),
            code="invalid_params",
            params={"item": repr(item)},
        )
    return item


def _item_title(request: AuthedRequest) -> str:
    item = BY_KEY.get(request.POST.get("item", ""))
    return _(item.title) if item else ""  # marked in readiness/items.py


@require_POST
@console_view(SIGN_OFF)
def signoff_record(request: AuthedRequest, pk: int):
    def call():
        expires_on = parse_date(request.POST.get("expires_on"))
        if expires_on is None:
            raise DomainError(
                gettext_noop("Give the expiry as a date (YYYY-MM-DD)."), code="invalid_params"
            )
        services.signoff_record(
            deployment_id=pk, item=_item(request), actor=request.user,
            note=request.POST.get("note", ""), expires_on=expires_on,
        )  # fmt: skip

    return _run(request, pk, call, _("Signed off: %(item)s.") % {"item": _item_title(request)})


@require_POST
@console_view(SIGN_OFF)
def signoff_revoke(request: AuthedRequest, pk: int):
    def call():
        services.signoff_revoke(
            deployment_id=pk, item=_item(request), actor=request.user,
            note=request.POST.get("note", ""),
        )  # fmt: skip

    done = _("Sign-off revoked: %(item)s.") % {"item": _item_title(request)}
    return _run(request, pk, call, done)
