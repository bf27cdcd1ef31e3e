"""The chat pages: /chat/ (the installations and the addresses to paste into Slack or
Mattermost, team channels, who is who, the requests chat sent, the posts not delivered)
and an incident's thread drawn from the stored posts, as the chat shows it.

Any console role reads them (nothing on them is secret: the tokens never leave the
admin); "Send again" on a failed post needs RETRY (commanders, admins) and goes through
chatops.services.config.post_retry, posted back to the page it is on.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from chatops import selectors
from chatops.models import Surface, Workspace
from chatops.permissions import LINK, RETRY
from chatops.services.config import post_retry
from console.bounds import parse_id
from console.http import AuthedRequest
from console.web import console_view, perform

SLASH_COMMAND = "/incident"  # as the Slack manifest and the Mattermost set-up name it
PER_PAGE = 20  # rows per list on /chat/
THREAD_PER_PAGE = 100  # posts per page of a thread


@dataclass(frozen=True)
class RequestUrl:
    """An address of ours a chat calls, and where it goes in the chat's set-up."""

    where: str | Promise
    url: str
    paste: bool  # pasted by hand (else the console sets it on what it sends)


_LABEL_SLACK_COMMANDS = gettext_lazy("Slash commands → /incident → Request URL")
_LABEL_SLACK_INTERACTIVITY = gettext_lazy("Interactivity & Shortcuts → Request URL")
_LABEL_MM_COMMANDS = gettext_lazy("Slash command /incident → Request URL")
_LABEL_MM_ACTIONS = gettext_lazy("Message buttons (set by the console on each message)")
_LABEL_MM_DIALOGS = gettext_lazy("Dialogs (set by the console when it opens one)")
# (what it is, URL name, pasted by hand)
_URLS: dict[str, tuple[tuple[Promise, str, bool], ...]] = {
    Surface.SLACK: (
        (_LABEL_SLACK_COMMANDS, "chatops:slack-commands", True),
        (_LABEL_SLACK_INTERACTIVITY, "chatops:slack-interactions", True),
    ),
    Surface.MATTERMOST: (
        (_LABEL_MM_COMMANDS, "chatops:mattermost-commands", True),
        (_LABEL_MM_ACTIONS, "chatops:mattermost-actions", False),
        (_LABEL_MM_DIALOGS, "chatops:mattermost-dialogs", False),
    ),
}


@dataclass(frozen=True)
class Install:
    workspace: Workspace
    urls: list[RequestUrl]


def _request_urls(request: AuthedRequest, workspace: Workspace) -> list[RequestUrl]:
    return [
        RequestUrl(
            where=where,
            url=request.build_absolute_uri(reverse(name, kwargs={"workspace": workspace.pk})),
            paste=paste,
        )
        for where, name, paste in _URLS.get(workspace.surface, ())
    ]


@dataclass(frozen=True)
class Listing:
    """One paginated list of the page and the query strings of its neighbours (a page
    has several lists, each with its own parameter; the others keep their place)."""

    page: Page
    prev: str
    next: str


def _listing(request: AuthedRequest, rows: QuerySet, param: str, per_page: int) -> Listing:
    page = Paginator(rows, per_page).get_page(request.GET.get(param))

    def link(number: int) -> str:
        query = request.GET.copy()
        query[param] = str(number)
        return "?" + query.urlencode()

    return Listing(
        page=page,
        prev=link(page.previous_page_number()) if page.has_previous() else "",
        next=link(page.next_page_number()) if page.has_next() else "",
    )


def _retry(request: AuthedRequest, *, back: str) -> HttpResponse:
    post_id = parse_id(request.POST.get("post"))
    if post_id is None:
        raise Http404(_("Name the post to send again."))
    return perform(
        request,
        lambda: post_retry(post_id=post_id, actor=request.user),
        done=_("Chat post #%(id)s will be sent again.") % {"id": post_id},
        back=back,
    )


@require_http_methods(["GET", "POST"])
@console_view()
def chat_index(request: AuthedRequest) -> HttpResponse:
    if request.method == "POST":
        return _retry(request, back=reverse("chatops:index") + "#chat-posts")
    installs = [Install(w, _request_urls(request, w)) for w in selectors.workspaces_list()]
    identities = _listing(request, selectors.identities_list(), "people", PER_PAGE)
    unmapped = selectors.unmapped_count() if identities.page.paginator.count else 0
    asked = _listing(request, selectors.interactions_recent(), "asked", PER_PAGE)
    posts = _listing(request, selectors.posts_open(), "posts", PER_PAGE)
    context = {
        "installs": installs,
        "identities": identities,
        "unmapped": unmapped,
        "asked": asked,
        "posts": posts,
        "can_retry": request.user.has_perm(RETRY),
        "can_link": request.user.is_staff and request.user.has_perm(LINK),
        "command": SLASH_COMMAND,
    }
    return render(request, "chatops/index.html", context)


@require_http_methods(["GET", "POST"])
@console_view()
def thread_detail(request: AuthedRequest, pk: int) -> HttpResponse:
    thread = selectors.thread_get(pk)
    if request.method == "POST":
        return _retry(request, back=reverse("chatops:thread", args=[pk]))
    state = selectors.thread_state(thread)
    listing = _listing(request, selectors.thread_posts(thread), "page", THREAD_PER_PAGE)
    posts = list(listing.page.object_list)
    names = selectors.names_for(thread.workspace_id, posts)
    context = {
        "thread": thread,
        "incident": thread.incident,
        "state": state,
        "listing": listing,
        "posts": [selectors.shown(p, names) for p in posts],
        "chat_link": selectors.thread_link(
            thread, state.current.post if state.current is not None else None
        ),
        "counts": selectors.thread_counts(thread),
        "can_retry": request.user.has_perm(RETRY),
    }
    return render(request, "chatops/thread.html", context)
