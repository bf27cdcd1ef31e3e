"""Sign-offs: only a commander signs, with a note and an expiry within a year; expired and
revoked sign-offs stop counting; the history is append-only; verified items cannot be
signed off by hand. Plus the red/amber/green rules."""

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from console import roles
from readiness import selectors, services
from readiness.items import SIGN_OFF_KEYS, VERIFIED_KEYS
from readiness.models import (
    Deployment,
    ItemCheck,
    ItemState,
    SignOff,
    SignOffAction,
    Verification,
    VerificationStatus,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def deployment():
    now = timezone.now()
    return Deployment.objects.create(
        namespace="llm-serving", lws="vllm-chat", first_seen_at=now, last_seen_at=now
    )


def _row(deployment, key):
    checklist = selectors.deployment_checklist(deployment_id=deployment.pk)
    return next(r for r in checklist.rows if r.item.key == key)


def _verified(deployment, state=ItemState.VERIFIED, **overrides):
    now = timezone.now()
    v = Verification.objects.create(
        deployment=deployment, status=VerificationStatus.DONE, requested_at=now, finished_at=now
    )
    for key in VERIFIED_KEYS:
        ItemCheck.objects.create(
            verification=v, item=key, state=overrides.get(key, state), summary="s", source="x"
        )
    Deployment.objects.filter(pk=deployment.pk).update(last_verification=v)


def _sign_all(deployment, who):
    for key in SIGN_OFF_KEYS:
        services.signoff_record(
            deployment_id=deployment.pk, item=key, actor=who, note="checked",
            expires_on=timezone.localdate() + timedelta(days=30),
        )  # fmt: skip


def test_only_a_commander_signs_off(deployment, make_user):
    responder = make_user("rita", roles.RESPONDER)
    with pytest.raises(PermissionDenied, match="Only a commander"):
        services.signoff_record(
            deployment_id=deployment.pk, item="oncall_trained", actor=responder, note="x",
            expires_on=timezone.localdate() + timedelta(days=30),
        )  # fmt: skip
    cmdr = make_user("cora", roles.COMMANDER)
    services.signoff_record(
        deployment_id=deployment.pk, item="oncall_trained", actor=cmdr,
        note="Game day 2026-11-20, 6 of 6 on-call",
        expires_on=timezone.localdate() + timedelta(days=90),
    )  # fmt: skip
    row = _row(deployment, "oncall_trained")
    assert row.state == ItemState.SIGNED_OFF
    assert row.rag == "green"
    assert row.summary.startswith("Signed off by cora on ")
    assert row.evidence == ["Game day 2026-11-20, 6 of 6 on-call"]


@pytest.mark.parametrize(
    ("item", "days", "note", "message"),
    [
        ("canary", 0, "ok", "is not in the future"),
        ("canary", 400, "ok", "at most 366 days"),
        ("canary", 30, "  ", "Say what you checked"),
        ("dcgm", 30, "ok", "verified by the console from the cluster"),
        ("nope", 30, "ok", "no checklist item 'nope'"),
    ],
)
def test_bad_sign_offs_are_refused_with_the_reason(
    deployment, make_user, item, days, note, message
):
    cmdr = make_user("cora", roles.COMMANDER)
    with pytest.raises(services.ReadinessError, match=message) as exc:
        services.signoff_record(
            deployment_id=deployment.pk, item=item, actor=cmdr, note=note,
            expires_on=timezone.localdate() + timedelta(days=days),
        )  # fmt: skip
    assert exc.value.code == "invalid_params"
    assert not SignOff.objects.exists()


def test_an_expired_sign_off_is_amber_and_a_revoked_one_red(deployment, make_user):
    cmdr = make_user("cora", roles.COMMANDER)
    SignOff.objects.create(
        deployment=deployment, item="canary", action=SignOffAction.SIGN_OFF, by=cmdr,
        at=timezone.now() - timedelta(days=100), note="old",
        expires_on=timezone.localdate() - timedelta(days=1),
    )  # fmt: skip
    row = _row(deployment, "canary")
    assert (row.state, row.rag) == (ItemState.EXPIRED, "amber")
    assert "expired on" in row.summary

    services.signoff_record(
        deployment_id=deployment.pk, item="canary", actor=cmdr, note="new thresholds",
        expires_on=timezone.localdate() + timedelta(days=10),
    )  # fmt: skip
    services.signoff_revoke(
        deployment_id=deployment.pk, item="canary", actor=cmdr, note="rollback broke"
    )
    row = _row(deployment, "canary")
    assert (row.state, row.rag) == (ItemState.FAILING, "red")
    assert "revoked by cora" in row.summary
    assert [s.action for s in row.history] == ["revoke", "sign_off", "sign_off"]
    with pytest.raises(services.ReadinessError, match="is not signed off"):
        services.signoff_revoke(deployment_id=deployment.pk, item="canary", actor=cmdr, note="x")
    first = SignOff.objects.order_by("at").first()
    first.note = "rewritten"
    with pytest.raises(RuntimeError, match="append-only"):
        first.save()
    with pytest.raises(RuntimeError, match="append-only"):
        first.delete()


def test_rag_is_the_worst_item(deployment, make_user):
    cmdr = make_user("cora", roles.COMMANDER)
    checklist = selectors.deployment_checklist(deployment_id=deployment.pk)
    assert checklist.rag == "red"  # nothing verified (amber) and nothing signed (red)
    assert {r.state for r in checklist.rows if r.item.verified_by_console} == {ItemState.UNKNOWN}

    _verified(deployment)
    _sign_all(deployment, cmdr)
    checklist = selectors.deployment_checklist(deployment_id=deployment.pk)
    assert checklist.rag == "green"
    assert checklist.counts == {"green": 15, "amber": 0, "red": 0}

    _verified(deployment, dcgm=ItemState.UNKNOWN)
    assert selectors.deployment_checklist(deployment_id=deployment.pk).rag == "amber"
    _verified(deployment, dcgm=ItemState.UNKNOWN, zone_spread=ItemState.FAILING)
    assert selectors.deployment_checklist(deployment_id=deployment.pk).rag == "red"


def test_one_active_verification_per_deployment_and_stale_ones_are_freed(
    deployment, make_user, settings, django_capture_on_commit_callbacks
):
    rita = make_user("rita", roles.RESPONDER)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        first, created = services.verification_request(deployment_id=deployment.pk, actor=rita)
        again, created_again = services.verification_request(
            deployment_id=deployment.pk, actor=rita
        )
    assert created
    assert not created_again
    assert again.pk == first.pk
    assert len(callbacks) == 1  # one task enqueued, on commit
    viewer = make_user("vic", roles.VIEWER)
    with pytest.raises(PermissionDenied):
        services.verification_request(deployment_id=deployment.pk, actor=viewer)

    settings.READINESS_VERIFICATION_STALE_SECONDS = 60
    Verification.objects.filter(pk=first.pk).update(
        requested_at=timezone.now() - timedelta(minutes=5)
    )
    with django_capture_on_commit_callbacks(execute=False):
        fresh, created = services.verification_request(deployment_id=deployment.pk, actor=rita)
    assert created
    assert fresh.pk != first.pk
    first.refresh_from_db()
    assert first.status == VerificationStatus.FAILED
    assert first.error == "No worker finished it within 60 s."


def test_old_verifications_are_pruned_but_the_latest_and_sign_offs_stay(deployment, make_user):
    cara = make_user("cara", roles.COMMANDER)
    _sign_all(deployment, cara)
    long_ago = timezone.now() - timedelta(days=45)
    for _ in range(3):
        _verified(deployment)
    Verification.objects.update(requested_at=long_ago, finished_at=long_ago)
    shown = Deployment.objects.get(pk=deployment.pk).last_verification_id
    _verified(deployment)  # recent: kept whatever its age rule says
    recent = Deployment.objects.get(pk=deployment.pk).last_verification_id
    Deployment.objects.filter(pk=deployment.pk).update(last_verification=shown)

    assert services.verifications_prune() == 2  # the two old passes nothing shows
    assert set(Verification.objects.values_list("pk", flat=True)) == {shown, recent}
    assert (
        ItemCheck.objects.filter(verification_id__in=[shown, recent]).count()
        == ItemCheck.objects.count()
    )
    assert SignOff.objects.count() == len(SIGN_OFF_KEYS)
