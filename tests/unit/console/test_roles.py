import itertools

import pytest
from django.contrib.auth.models import Group

from console import roles

pytestmark = pytest.mark.django_db


def test_groups_exist_with_exactly_the_declared_permissions():
    for role in roles.ROLES.values():
        group = Group.objects.get(name=role.name)
        got = {f"{p.content_type.app_label}.{p.codename}" for p in group.permissions.all()}
        assert got == set(role.permissions), role.name


def test_each_role_includes_the_one_before():
    order = [roles.ROLES[name].permissions for name in roles.ROLE_ORDER]
    for lower, higher in itertools.pairwise(order):
        assert set(lower) <= set(higher)


def test_roles_sync_is_idempotent():
    roles.roles_sync()
    roles.roles_sync()
    assert Group.objects.filter(name__in=roles.ROLE_ORDER).count() == 4


def test_user_roles(make_user, django_user_model):
    assert roles.user_roles(make_user("c", role="commander")) == ["commander"]
    assert roles.user_roles(make_user("n", role=None)) == []
    su = django_user_model.objects.create_superuser("root", password="x")
    assert roles.user_roles(su) == ["admin"]
