"""`manage.py check` fails on a broken runbook catalogue (runbooks.E001)."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from runbooks.checks import runbook_catalog_check


def test_check_passes_on_the_shipped_catalogue():
    out = StringIO()
    call_command("check", stdout=out)
    assert "no issues" in out.getvalue()
    assert runbook_catalog_check() == []


def test_check_reports_a_broken_catalogue(settings, catalog_copy):
    catalog_copy.edit("nccl-hang", lambda doc: doc["triage"][2].update(comparator="=>"))
    settings.RUNBOOKS_CATALOG_DIR = catalog_copy.dir
    [error] = runbook_catalog_check()
    assert error.id == "runbooks.E001"
    assert "nccl-hang.yaml: triage[2].comparator" in error.msg
    with pytest.raises(SystemCheckError, match=r"runbooks\.E001"):
        call_command("check", stdout=StringIO(), stderr=StringIO())


def test_check_reports_a_missing_catalogue_dir(settings, tmp_path):
    settings.RUNBOOKS_CATALOG_DIR = tmp_path / "nowhere"
    [error] = runbook_catalog_check()
    assert error.id == "runbooks.E001"
    assert "nowhere" in error.msg
