"""No template hard-codes one of the console's paths: links, htmx URLs, form actions and
paths shown as text come from {% url %}, static files from {% static %}. A moved URL
then moves everywhere, and an app's templates need not know where another app is
mounted."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.template.autoreload import get_template_directories
from django.urls import reverse

from console import roles

# A slash starting a path right after a quote, `>`, `(`, `=` or whitespace: href="/x",
# hx-get='/x', <code>/x</code>, {% if '/x/' in request.path %}. Not `</tag>`, not
# "http://host/x", not "a / b", not "{% url 'x' %}/suffix".
LITERAL_PATH = re.compile(r"""(?:^|(?<=[\s"'>(=`]))/[A-Za-z_][\w.\-/]*""", re.MULTILINE)


def _project_template_dirs() -> list[Path]:
    base = Path(settings.BASE_DIR).resolve()
    dirs = {Path(d).resolve() for d in get_template_directories()}
    return sorted(d for d in dirs if base in d.parents and ".venv" not in d.parts)


def literal_paths(text: str) -> list[str]:
    return [m.group(0) for m in LITERAL_PATH.finditer(text)]


def test_the_scan_finds_literal_paths_and_spares_tags():
    offending = """<a href="/runbooks/">x</a> <div hx-get='/postmortems/1/panel/'></div>
    <form action="/incidents/2/notes/"></form> <code>/readyz</code>
    {% if '/runbooks/drills/' in request.path %}{% endif %}"""
    assert literal_paths(offending) == [
        "/runbooks/",
        "/postmortems/1/panel/",
        "/incidents/2/notes/",
        "/readyz",
        "/runbooks/drills/",
    ]
    fine = """<a href="{% url 'runbooks:catalogue' %}">x</a></a> <img src="{% static 'a/b.png' %}">
    <a href="https://example.com/docs/x">docs</a> a / b and/or {% url 'x' %}?after=1 <br/>"""
    assert literal_paths(fine) == []


def test_no_template_hard_codes_a_path():
    dirs = _project_template_dirs()
    assert Path(settings.BASE_DIR, "templates").resolve() in dirs
    offenders = []
    for directory in dirs:
        for path in sorted(directory.rglob("*.html")) + sorted(directory.rglob("*.txt")):
            for number, line in enumerate(path.read_text().splitlines(), start=1):
                offenders += [
                    f"{path.relative_to(directory)}:{number}: {found}"
                    for found in literal_paths(line)
                ]
    assert offenders == [], "use {% url %} or {% static %}:\n" + "\n".join(offenders)


NAV = ("Incidents", "Runbooks", "Actions", "Drills", "Postmortems", "Reports", "Readiness")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url_name", "current"),
    [
        ("incidents:list", "Incidents"),
        ("runbooks:catalogue", "Runbooks"),
        ("actions:actions", "Actions"),
        ("drills:drills", "Drills"),
        ("postmortems:list", "Postmortems"),
        ("postmortems:reports", "Reports"),
        ("readiness:list", "Readiness"),
    ],
)
def test_the_nav_marks_the_section_by_url_name_not_path(client, make_user, url_name, current):
    client.force_login(make_user("vic", roles.VIEWER))
    response = client.get(reverse(url_name))
    assert response.status_code == 200
    marked = re.findall(r'aria-current="page">([^<]+)</a>', response.content.decode())
    assert marked == [current]
    assert set(marked) <= set(NAV)
