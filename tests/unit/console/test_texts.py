"""console/texts: a text stored as ids and parameters is worded in the reader's language,
falls back to what was stored, and reaches the API as ids and parameters."""

from datetime import UTC, datetime

import pytest
from django.utils import timezone, translation
from django.utils.translation import gettext_noop, ngettext_lazy

from console.texts import as_api, at, english, join, msg, render, texts_register

texts_register(
    {
        # Already in the catalogue with its Chinese (incidents/timeline_text.py).
        "test.acked": gettext_noop("Incident acknowledged."),
        "test.opened": gettext_noop("Incident opened: %(title)s"),
        "test.count": ngettext_lazy(
            "%(count)s alert firing: %(names)s", "%(count)s alerts firing: %(names)s", "count"
        ),
        "test.at": gettext_noop("Due at %(time)s."),
    }
)


def test_english_is_stored_and_chinese_is_worded_when_read():
    m = msg("test.opened", title="GPU ECC") + msg("test.acked")
    assert m.english == "Incident opened: GPU ECC Incident acknowledged."
    stored = m.stored
    assert stored == [["test.opened", {"title": "GPU ECC"}], ["test.acked", {}]]
    zh = render(stored, language="zh-hans")
    assert "GPU ECC" in zh
    assert "Incident" not in zh


def test_plural_follows_the_count_and_nested_phrases_follow_the_language():
    one = msg("test.count", count=1, names="A").english
    two = msg("test.count", count=2, names="A, B").english
    assert (one, two) == ("1 alert firing: A", "2 alerts firing: A, B")
    nested = msg("test.opened", title=msg("test.acked"))
    assert english(nested.stored) == "Incident opened: Incident acknowledged."
    assert "Incident" not in render(nested.stored, language="zh-hans")


def test_an_unknown_id_or_a_lost_parameter_shows_what_was_stored():
    assert render([["no.such.id", {}]], fallback="as stored") == "as stored"
    assert render([["test.opened", {}]], fallback="as stored") == "as stored"
    assert render(None, fallback="as stored") == "as stored"
    with pytest.raises(KeyError):
        msg("no.such.id")
    with pytest.raises(TypeError):
        msg("test.opened", title=object())


def test_moments_are_shown_in_the_reader_zone():
    m = msg("test.at", time=at(datetime(2026, 12, 5, 8, 30, tzinfo=UTC)))
    with timezone.override("Asia/Shanghai"), translation.override("en"):
        assert render(m.stored) == "Due at 16:30 CST."


def test_api_shape_names_ids_and_params():
    m = join([msg("test.opened", title=msg("test.acked"))])
    assert as_api(m.stored) == [
        {"id": "test.opened", "params": {"title": [{"id": "test.acked", "params": {}}]}}
    ]
    assert as_api(None) is None


def test_chinese_sentences_join_without_a_space_after_a_full_width_stop():
    m = msg("test.acked") + msg("test.opened", title="GPU")
    assert m.english == "Incident acknowledged. Incident opened: GPU"
    zh = render(m.stored, language="zh-hans")
    assert "。 " not in zh
    assert "。" in zh
