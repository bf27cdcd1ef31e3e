"""Texts the console writes, stored as what happened (a message id and its parameters)
and worded in the reader's language when read.

A writer builds a `Msg` with `msg("app.key", **params)` from templates its app registered
(`texts_register`, from the app's `texts.py`, imported by its AppConfig.ready()). The
English wording is stored beside it (a timeline entry's `message`, a run's
`approval_reason`) for search, for old readers and as the fallback; the parts are stored
in a JSON column (`payload["msg"]` for append-only events, `texts[field]` on rows). A page
renders the parts in the viewer's language (`render`, the `text` template filters), the
API in the request's and also returns the ids and parameters (`as_api`). Rows written
before a text had an id have no parts and are shown as stored.
"""

from console.texts.catalogue import template_for, texts_register
from console.texts.message import Msg, StoredParts, as_api, at, english, join, msg, render

__all__ = [
    "Msg",
    "StoredParts",
    "as_api",
    "at",
    "english",
    "join",
    "msg",
    "render",
    "template_for",
    "texts_register",
]
