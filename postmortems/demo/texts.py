"""The demo history's own texts (console/texts/), for what only seeded rows say: the
real code words these from live state the history does not have. Everything else the
history writes uses the ids of the app that writes such rows for real."""

from django.utils.translation import gettext_noop

from console.texts import texts_register

texts_register(
    {
        # A demo fix's read-back (a real run's comes from its kind, reading the target).
        "postmortems.demo.in_place": gettext_noop("the change is in place"),
    }
)
