"""Fixtures shared by the postmortem tests: the simulated cluster (for real action runs
on a drafted incident)."""

from tests.unit.actions.conftest import sim  # noqa: F401
