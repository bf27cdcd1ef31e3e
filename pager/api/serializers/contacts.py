"""My contact methods. The address is write-only: it often carries a token, so answers
show a masked form (scheme and host, an email's domain) and never the address itself."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from pager.api.serializers.texts import WordedIds, WordedText
from pager.models import ContactKind
from pager.paging.methods import address_masked, contact_test_words

ADDRESS_MAX = 2000
LABEL_MAX = 100
POSITION_MAX = 1000


class ContactMethodSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    position = serializers.IntegerField(help_text="1: tried first.")
    kind = serializers.ChoiceField(choices=ContactKind.choices)
    label = serializers.CharField()  # type: ignore[assignment]
    address_shown = serializers.SerializerMethodField(
        help_text="The address masked (scheme and host, or an email's domain); the address "
        "itself is never shown again."
    )
    enabled = serializers.BooleanField()
    last_test_at = serializers.DateTimeField(allow_null=True)
    last_test_result = WordedText(
        contact_test_words,
        help_text="How the last test went, in the request's language (a service's error "
        "inside it as it answered).",
    )
    last_test_result_i18n = WordedIds(
        contact_test_words,
        source="last_test_result",
        help_text='The outcome as message ids and parameters ([{"id", "params"}]); null '
        "when never tested.",
    )
    created_at = serializers.DateTimeField()

    def get_address_shown(self, method: Any) -> str:
        return address_masked(method.kind, method.address)


class ContactMethodInputSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=ContactKind.choices)
    address = serializers.CharField(
        max_length=ADDRESS_MAX,
        write_only=True,
        help_text="What the method needs: an apprise URL (push, SMS, voice, Telegram, "
        "Slack), an email address, or a webhook URL (with #secret=<signing key>). Write-only.",
    )
    label = serializers.CharField(
        max_length=LABEL_MAX, required=False, allow_blank=True, default=""
    )  # type: ignore[assignment]
    enabled = serializers.BooleanField(required=False, default=True)


class ContactMethodPatchSerializer(serializers.Serializer):
    """What to change (absent: unchanged). A new kind needs the address again."""

    kind = serializers.ChoiceField(choices=ContactKind.choices, required=False)
    address = serializers.CharField(max_length=ADDRESS_MAX, write_only=True, required=False)
    label = serializers.CharField(max_length=LABEL_MAX, required=False, allow_blank=True)  # type: ignore[assignment]
    enabled = serializers.BooleanField(required=False)


class ContactMethodMoveSerializer(serializers.Serializer):
    position = serializers.IntegerField(
        min_value=1, max_value=POSITION_MAX, help_text="Where to put it: 1 = tried first."
    )


class ContactMethodTestResultSerializer(serializers.Serializer):
    result = WordedText(
        contact_test_words,
        help_text="How the test message went, in the request's language (also kept on the method).",
    )
    result_i18n = WordedIds(
        contact_test_words,
        source="result",
        help_text='The outcome as message ids and parameters ([{"id", "params"}]).',
    )
    method = ContactMethodSerializer()
