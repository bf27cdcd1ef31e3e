"""The old plaintext tokens (rest_framework.authtoken) do not linger: the app is gone.
(The migration that dropped their table on older installs ran in every database that can
upgrade now; it is squashed into console's initial migration.)"""

from django.apps import apps


def test_the_plaintext_token_app_is_gone():
    assert not apps.is_installed("rest_framework.authtoken")
    assert apps.is_installed("knox")
