"""Who a chat user acts as (chatops/identity.py), against the local Slack server's
users.info through the real slack_sdk client."""

from datetime import timedelta

import pytest
from django.utils import timezone

from chatops.identity import acting_user, identity_resolve, profile_match
from chatops.messages import Profile
from chatops.models import ChatIdentity, MappedBy
from console import roles
from console.oidc.models import OidcIdentity

pytest_plugins = ["tests.chat_slack_server"]

net = pytest.mark.django_db(transaction=True)  # the profile is read outside any transaction


@pytest.fixture(autouse=True)
def _loopback(settings):
    settings.OUTGOING_URL_ALLOWLIST = "127.0.0.1/32"


def _reads(server) -> int:
    return len([c for c in server.calls if c.method == "users.info"])


@net
def test_verified_email_maps_case_insensitively(slack_server, slack_workspace, make_user):
    rita = make_user("rita", roles.RESPONDER, email="Rita@Example.com")
    slack_server.add_user("U1", "rita", email="rita@example.COM")
    identity = identity_resolve(workspace=slack_workspace, external_user="U1")
    assert identity.user == rita
    assert identity.mapped_by == MappedBy.EMAIL
    assert identity.email == "rita@example.COM"
    assert identity.checked_at is not None
    assert acting_user(identity) == rita


@net
def test_unverified_email_is_not_mapped(slack_server, slack_workspace, make_user):
    make_user("rita", email="rita@example.com")
    slack_server.add_user("U1", "rita", email="rita@example.com", confirmed=False)
    identity = identity_resolve(workspace=slack_workspace, external_user="U1")
    assert identity.user is None
    assert identity.mapped_by == MappedBy.NONE
    assert identity.email == ""


@net
def test_an_address_two_accounts_share_maps_nobody(slack_server, slack_workspace, make_user):
    make_user("rita", email="ops@example.com")
    make_user("rita2", email="OPS@example.com")
    slack_server.add_user("U1", "ops", email="ops@example.com")
    assert identity_resolve(workspace=slack_workspace, external_user="U1").user is None


@net
def test_a_deactivated_user_is_never_mapped_by_email(slack_server, slack_workspace, make_user):
    make_user("gone", email="gone@example.com", is_active=False)
    slack_server.add_user("U1", "gone", email="gone@example.com")
    assert identity_resolve(workspace=slack_workspace, external_user="U1").user is None


@net
def test_admin_link_is_kept_without_reading_the_chat(slack_server, slack_workspace, make_user):
    cara = make_user("cara", roles.COMMANDER)
    ChatIdentity.objects.create(
        workspace=slack_workspace, external_user="U9", user=cara, mapped_by=MappedBy.ADMIN
    )
    identity = identity_resolve(workspace=slack_workspace, external_user="U9")
    assert identity.user == cara
    assert _reads(slack_server) == 0
    cara.is_active = False
    cara.save()
    identity = identity_resolve(workspace=slack_workspace, external_user="U9")
    assert acting_user(identity) is None  # linked, but a deactivated user never acts


@net
def test_fresh_row_is_kept_stale_row_is_read_again(
    slack_server, slack_workspace, make_user, settings
):
    settings.CHAT_IDENTITY_RECHECK_SECONDS = 3600
    rita = make_user("rita", email="rita@example.com")
    cole = make_user("cole", email="cole@example.com")
    slack_server.add_user("U1", "rita", email="rita@example.com")
    assert identity_resolve(workspace=slack_workspace, external_user="U1").user == rita
    slack_server.add_user("U1", "rita", email="cole@example.com")  # changed in the chat
    assert identity_resolve(workspace=slack_workspace, external_user="U1").user == rita
    assert _reads(slack_server) == 1
    ChatIdentity.objects.update(checked_at=timezone.now() - timedelta(hours=2))
    identity = identity_resolve(workspace=slack_workspace, external_user="U1")
    assert identity.user == cole
    assert _reads(slack_server) == 2
    assert ChatIdentity.objects.count() == 1


@net
def test_failed_read_keeps_the_previous_mapping(slack_server, slack_workspace, make_user, caplog):
    rita = make_user("rita", email="rita@example.com")
    slack_server.add_user("U1", "rita", email="rita@example.com")
    identity_resolve(workspace=slack_workspace, external_user="U1")
    ChatIdentity.objects.update(checked_at=timezone.now() - timedelta(days=30))
    slack_server.fail(500, method="users.info", times=5)
    identity = identity_resolve(workspace=slack_workspace, external_user="U1")
    assert identity.user == rita
    assert "keeping the mapping to rita" in caplog.text


@net
def test_failed_read_of_a_new_user_leaves_them_unmapped(slack_server, slack_workspace, caplog):
    slack_server.refuse("user_not_found", method="users.info")
    identity = identity_resolve(
        workspace=slack_workspace, external_user="U404", external_name="zed"
    )
    assert identity.user is None
    assert identity.mapped_by == MappedBy.NONE
    assert identity.external_name == "zed"
    assert identity.checked_at is None  # read again next time
    assert "unmapped until it can be read" in caplog.text


@pytest.mark.django_db
def test_sso_subject_maps_before_email(make_user):
    sam = make_user("sam", email="shared@example.com")
    make_user("other", email="x@example.com")
    OidcIdentity.objects.create(user=sam, issuer="https://idp.example.com", subject="sub-123")
    user, how = profile_match(Profile(user="U1", name="sam", sso_subject="sub-123",
                                      email="x@example.com", email_verified=True))  # fmt: skip
    assert (user, how) == (sam, MappedBy.SSO)
    sam.is_active = False
    sam.save()
    user, how = profile_match(Profile(user="U1", name="sam", sso_subject="sub-123",
                                      email="x@example.com", email_verified=True))  # fmt: skip
    assert how == MappedBy.EMAIL
    assert user.username == "other"
    assert profile_match(Profile(user="U1", name="n")) == (None, MappedBy.NONE)
