"""The pager in the demo (`manage.py seed_demo`, run by `make run`): a configured pager
(teams, schedules with a layer, an escalation policy, contact methods, a maintenance
window; config.py) and the page history of the demo incidents (history.py), so the
teams, calendar, pages and reports have something to show from the first start.

Registered with incidents' demo registry when this package is imported (PagerConfig.
ready()), ordered after the postmortems' part: the history needs the demo incidents.
`seed_demo --reset` removes the history and keeps the configuration (reset.py).
"""

from __future__ import annotations

from typing import Any

from incidents.demo import DemoContext, DemoPart, demo_part_register
from pager.demo.config import config_seed
from pager.demo.history import history_seed
from pager.demo.reset import pager_demo_reset

ORDER = 20  # after postmortems' "history" (10): its incidents are paged here


def pager_demo_seed(ctx: DemoContext) -> dict[str, Any]:
    counts = config_seed(ctx)
    counts.update(history_seed(ctx))
    return counts


PART = DemoPart(
    key="pager", order=ORDER, seed=pager_demo_seed, reset=pager_demo_reset, configure=config_seed
)
demo_part_register(PART)
