"""Fixtures shared by the postmortem tests: the simulated cluster (for real action runs
on a drafted incident) and one person per role."""

import pytest

from console import roles


@pytest.fixture
def people(make_user):
    return {
        "vic": make_user("vic", roles.VIEWER),
        "rita": make_user("rita", roles.RESPONDER),
        "cara": make_user("cara", roles.COMMANDER),
        "cole": make_user("cole", roles.COMMANDER),
        "ada": make_user("ada", roles.ADMIN),
    }
