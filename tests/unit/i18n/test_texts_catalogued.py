"""Every message id an app registers (console/texts/) has its Chinese in the catalogue:
a template that `makemessages` cannot see (an alias for gettext_noop, a string built at
run time) would be worded in English for every reader."""

from django.apps import apps
from django.utils.functional import Promise
from django.utils.translation import trans_real

from console.texts.catalogue import known_ids, template_for


def _msgids(template) -> list:
    """The catalogue keys a template is looked up by."""
    if not isinstance(template, Promise):
        return [template]
    if not hasattr(template, "_kw"):
        return []  # words itself from another catalogue (the runbooks' guard titles)
    args, kw = template._args, template._kw  # the lazy call's arguments
    if "singular" in kw:  # ngettext_lazy(singular, plural, "count"), or npgettext_lazy
        key = kw["singular"] if "context" not in kw else f"{kw['context']}\x04{kw['singular']}"
        return [(key, 0)]
    if len(args) == 2:  # pgettext_lazy(context, message)
        return [f"{args[0]}\x04{args[1]}"]
    return [args[0]]  # gettext_lazy(message)


def test_every_registered_template_is_in_the_chinese_catalogue():
    assert apps.ready
    catalogue = trans_real.translation("zh-hans")._catalog
    ids = [key for key in known_ids() if not key.startswith("test.")]
    assert len(ids) > 300, "the apps' texts modules were not imported"
    missing = [
        (key, msgid)
        for key in ids
        for msgid in _msgids(template_for(key))
        if msgid not in catalogue
    ]
    assert not missing, missing[:20]
