"""The guard's account cannot be taken (issue 23, finding 5): a person who signs in with
single sign-on as `console-guard` before the guard ever acted is refused, and the
guard's undo carries the service account made by the migrations. Without that account
the guard does not make one: its undo is refused with the reason and the commander is
paged."""

import pytest
from django.contrib.auth.models import User
from django.test import RequestFactory

from actions.guard import services as guard_services
from console import roles
from console.oidc.models import OidcIdentity
from console.oidc.services import SignInRefused, oidc_account_sync
from tests.unit.actions import test_guard_watch as watch_tests
from tests.unit.actions.test_guard_watch import HIT, later, succeeded_run, timeline

# The guard tests' fixtures: people, a Prometheus stand-in, one breaching check counts.
people, prom = watch_tests.people, watch_tests.prom
_one_check_counts, _clear_cache = watch_tests._one_check_counts, watch_tests._clear_cache

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_kubernetes")]
ISSUER = "https://idp.example.test/realms/acme"


def breach(people, prom):
    run, watch = succeeded_run(people["responder"])
    guard_services.guard_watch_evaluate(watch_id=watch.pk)
    prom.answers[HIT] = 0.05
    later(watch)
    return run, guard_services.guard_watch_evaluate(watch_id=watch.pk)


def test_an_sso_user_named_console_guard_is_refused_and_the_undo_is_the_guards(
    people, prom, settings
):
    settings.OIDC_ENABLED, settings.OIDC_ISSUER = True, ISSUER
    settings.OIDC_ROLE_GROUPS = {roles.COMMANDER: ["sre-leads"]}
    claims = {"sub": "u-1", "preferred_username": "console-guard", "groups": ["sre-leads"]}
    with pytest.raises(SignInRefused, match="reserved"):
        oidc_account_sync(issuer=ISSUER, claims=claims, request=RequestFactory().get("/"))
    _run, watch = breach(people, prom)
    carrier = watch.undo_run.requested_by
    assert carrier.get_username() == "console-guard"
    assert not OidcIdentity.objects.filter(user=carrier).exists()
    assert roles.user_roles(carrier) == []
    assert not carrier.has_usable_password()


def test_without_its_account_the_guard_pages_instead_of_making_one(people, prom):
    User.objects.filter(username="console-guard").delete()
    run, watch = breach(people, prom)
    assert watch.outcome == "paged"
    assert watch.undo_run is None
    assert not User.objects.filter(username="console-guard").exists()
    assert "manage.py migrate" in timeline(run.incident_id)[-1]
