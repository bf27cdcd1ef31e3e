"""The Django admin's user pages, with the console's username rules: no look-alike of an
existing name, no invisible characters, no service account's reserved name, and a
service account keeps the name its setting gives it (console/usernames/keys.py,
console/service_accounts.py)."""

from collections.abc import Callable
from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.utils.translation import gettext

from console.service_accounts import is_service_account
from console.usernames.keys import UsernameRefused, username_check


def _username_rules(user: User | None) -> Callable[[str], None]:
    def check(value: str) -> None:
        if user is not None and is_service_account(user) and value != user.username:
            raise ValidationError(
                gettext("A service account's name is set by its setting; it cannot be renamed.")
            )
        try:
            username_check(value, user_pk=user.pk if user is not None else None)
        except UsernameRefused as exc:
            raise ValidationError(exc.translated(), code=exc.code) from exc

    return check


class ConsoleUserCreationForm(AdminUserCreationForm):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["username"].validators.append(_username_rules(None))


class ConsoleUserChangeForm(UserChangeForm):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        user = self.instance if self.instance.pk else None
        self.fields["username"].validators.append(_username_rules(user))


class ConsoleUserAdmin(UserAdmin):
    add_form = ConsoleUserCreationForm
    form = ConsoleUserChangeForm


admin.site.unregister(User)
admin.site.register(User, ConsoleUserAdmin)
