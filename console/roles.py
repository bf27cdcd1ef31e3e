"""Roles are Django groups; this module is the one place that says what each may do.

Permissions are named by string ("app_label.codename") so this module imports no app.
Each role includes the permissions of the roles before it.
"""

from dataclasses import dataclass

from django.contrib.auth.models import Group, Permission

VIEWER = "viewer"
RESPONDER = "responder"
COMMANDER = "commander"
ADMIN = "admin"
ROLE_ORDER = (VIEWER, RESPONDER, COMMANDER, ADMIN)


@dataclass(frozen=True)
class Role:
    name: str
    description: str
    permissions: tuple[str, ...]


_VIEW = (
    "incidents.view_incident",
    "incidents.view_alert",
    "incidents.view_timelineevent",
    "actions.view_actionrun",
    "drills.view_drillplan",
    "drills.view_drillrun",
    "postmortems.view_postmortem",
    "postmortems.view_actionitem",
    "readiness.view_deployment",
    "pager.view_team",
)
_RESPOND = (
    "incidents.acknowledge_incident",
    "incidents.declare_incident",
    "incidents.mitigate_incident",
    "incidents.add_note",
    "incidents.take_command",
    "actions.request_actionrun",
    "postmortems.draft_postmortem",
    "postmortems.manage_actionitem",
    "readiness.verify_deployment",
    "pager.manage_own_oncall",
)
_COMMAND = (
    "incidents.resolve_incident",
    "incidents.assign_commander",
    "incidents.reopen_incident",
    "incidents.silence_alerts",
    "incidents.view_webhookreceipt",
    "incidents.replay_webhookreceipt",
    "actions.approve_actionrun",
    "drills.run_drill",
    "postmortems.review_postmortem",
    "postmortems.publish_postmortem",
    "readiness.signoff_deployment",
    "notifications.view_delivery",
    "notifications.retry_delivery",
    "pager.manage_pager",
)
_ADMIN = (
    "incidents.change_incident",
    "incidents.change_alert",
    "incidents.change_webhookreceipt",
    # Retention's archive (incidents/archive/): run it by hand, restore from it.
    "incidents.view_archivebatch",
    "incidents.archive_incidents",
    "incidents.restore_incidents",
    # Everyone's API tokens (GET/DELETE /api/v1/auth/tokens/, the admin); each person
    # lists and revokes their own with any role.
    "console.view_apitoken",
    "console.delete_apitoken",
    "postmortems.change_postmortem",
    "console.view_auditevent",  # the sign-in audit log (/audit/, the admin)
    # Chat installations, their channels and who a chat user is (chatops/, the admin).
    "chatops.view_workspace",
    "chatops.add_workspace",
    "chatops.change_workspace",
    "chatops.delete_workspace",
    "chatops.view_teamchannel",
    "chatops.add_teamchannel",
    "chatops.change_teamchannel",
    "chatops.delete_teamchannel",
    "chatops.view_chatidentity",
    "chatops.change_chatidentity",
    "chatops.view_chatthread",
    "chatops.view_chatpost",
    "chatops.view_chatinteraction",
    # Notification targets and rules are configured in the Django admin.
    "notifications.view_target",
    "notifications.add_target",
    "notifications.change_target",
    "notifications.delete_target",
    "notifications.view_rule",
    "notifications.add_rule",
    "notifications.change_rule",
    "notifications.delete_rule",
    # The pager's configuration in the Django admin (pages and deliveries read-only).
    "pager.view_team",
    "pager.add_team",
    "pager.change_team",
    "pager.delete_team",
    "pager.view_ownership",
    "pager.add_ownership",
    "pager.change_ownership",
    "pager.delete_ownership",
    "pager.view_schedule",
    "pager.add_schedule",
    "pager.change_schedule",
    "pager.delete_schedule",
    "pager.view_rotation",
    "pager.add_rotation",
    "pager.change_rotation",
    "pager.delete_rotation",
    "pager.view_rotationmember",
    "pager.add_rotationmember",
    "pager.change_rotationmember",
    "pager.delete_rotationmember",
    "pager.view_override",
    "pager.add_override",
    "pager.change_override",
    "pager.delete_override",
    "pager.view_shiftswap",
    "pager.add_shiftswap",
    "pager.change_shiftswap",
    "pager.delete_shiftswap",
    "pager.view_pagerprofile",
    "pager.add_pagerprofile",
    "pager.change_pagerprofile",
    "pager.delete_pagerprofile",
    "pager.view_escalationpolicy",
    "pager.add_escalationpolicy",
    "pager.change_escalationpolicy",
    "pager.delete_escalationpolicy",
    "pager.view_escalationstep",
    "pager.add_escalationstep",
    "pager.change_escalationstep",
    "pager.delete_escalationstep",
    "pager.view_contactmethod",
    "pager.add_contactmethod",
    "pager.change_contactmethod",
    "pager.delete_contactmethod",
    "pager.view_heartbeat",
    "pager.add_heartbeat",
    "pager.change_heartbeat",
    "pager.delete_heartbeat",
    "pager.view_maintenancewindow",
    "pager.add_maintenancewindow",
    "pager.change_maintenancewindow",
    "pager.delete_maintenancewindow",
    "pager.view_page",
    "pager.view_pagedelivery",
    "pager.view_maintenancesummary",
)

ROLES: dict[str, Role] = {
    VIEWER: Role(VIEWER, "Reads incidents, alerts and timelines.", _VIEW),
    RESPONDER: Role(
        RESPONDER,
        "Acknowledges and mitigates, writes notes, takes command of an unowned incident, "
        "requests remediation actions, drafts postmortems and manages action items.",
        _VIEW + _RESPOND,
    ),
    COMMANDER: Role(
        COMMANDER,
        "Assigns the commander, resolves and reopens, silences alerts in Alertmanager, "
        "approves other people's risky actions, reviews and publishes postmortems; sees the "
        "webhook receipt log.",
        _VIEW + _RESPOND + _COMMAND,
    ),
    ADMIN: Role(
        ADMIN,
        "Everything, including the Django admin, editing published postmortems and the "
        "sign-in audit log.",
        _VIEW + _RESPOND + _COMMAND + _ADMIN,
    ),
}


def roles_sync() -> None:
    """Create the role groups and set their permissions to exactly what ROLES says."""
    wanted = {p for role in ROLES.values() for p in role.permissions}
    by_name = {}
    for perm in Permission.objects.select_related("content_type").filter(
        codename__in={p.split(".", 1)[1] for p in wanted}
    ):
        by_name[f"{perm.content_type.app_label}.{perm.codename}"] = perm
    for role in ROLES.values():
        group, _ = Group.objects.get_or_create(name=role.name)
        group.permissions.set([by_name[p] for p in role.permissions if p in by_name])


def user_roles(user) -> list[str]:
    """The role names a user holds, in ROLE_ORDER (superusers hold admin)."""
    if not getattr(user, "is_authenticated", False):
        return []
    if user.is_superuser:
        return [ADMIN]
    names = {g.name for g in user.groups.all()}
    return [r for r in ROLE_ORDER if r in names]


def has_any_role(user) -> bool:
    return bool(user_roles(user))
