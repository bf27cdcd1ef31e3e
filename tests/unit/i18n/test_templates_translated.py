"""Every word a user reads in a template goes through a translation tag."""

from pathlib import Path

from django.conf import settings

from tests.unit.i18n.template_text import untranslated_text

ROOT = Path(settings.BASE_DIR)


def _templates() -> list[Path]:
    return sorted(p for p in (ROOT / "templates").rglob("*.html"))


def test_no_template_text_escapes_translation():
    found = [str(u) for path in _templates() for u in untranslated_text(path, ROOT)]
    assert not found, "text not marked for translation:\n" + "\n".join(found)


def test_the_scanner_finds_unmarked_text_and_ignores_marked_text(tmp_path):
    page = tmp_path / "page.html"
    page.write_text(
        "{% load i18n %}<h1>{% translate 'Incidents' %}</h1>\n"
        "<p>Nothing to see</p>\n"
        '<button title="Close it">\u00d7</button>\n'
        "{% blocktranslate trimmed %}Quiet {{ x }} here{% endblocktranslate %}\n"
        "<code>kubectl get pods</code> <span>GPU</span> {{ value }}\n"
        '<input type="submit" value="Save">\n',
        encoding="utf-8",
    )
    found = [(u.line, u.text) for u in untranslated_text(page, tmp_path)]
    assert found == [(2, "Nothing to see"), (3, "Close it"), (6, "Save")]
