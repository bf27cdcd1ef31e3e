"""`manage.py check` (and so CI and every deploy) fails on a broken runbook catalogue,
translations included: every language of `settings.LANGUAGES` other than English needs
every runbook's text fields (`runbooks.translations`)."""

from django.core.checks import Error, register

from runbooks.catalog import default_dir, load_catalog
from runbooks.schema import CatalogError


@register()
def runbook_catalog_check(app_configs=None, **kwargs):
    try:
        load_catalog()
    except CatalogError as exc:
        return [
            Error(
                str(exc),
                hint=(
                    f"Fix the runbook catalogue in {default_dir()} (see runbooks/schema.py; "
                    "translations: runbooks/translations.py)."
                ),
                id="runbooks.E001",
            )
        ]
    return []
