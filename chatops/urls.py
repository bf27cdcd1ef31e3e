from django.urls import path

from chatops import views
from chatops.mattermost import views as mattermost
from chatops.slack import views as slack

app_name = "chatops"

urlpatterns = [
    path("", views.chat_index, name="index"),
    path("threads/<int:pk>/", views.thread_detail, name="thread"),
    # What the chats call: verified by signature or token, never by a session (no CSRF).
    path("slack/<int:workspace>/commands/", slack.commands, name="slack-commands"),
    path("slack/<int:workspace>/interactions/", slack.interactions, name="slack-interactions"),
    path("mattermost/<int:workspace>/commands/", mattermost.commands, name="mattermost-commands"),
    path("mattermost/<int:workspace>/actions/", mattermost.actions, name="mattermost-actions"),
    path("mattermost/<int:workspace>/dialogs/", mattermost.dialogs, name="mattermost-dialogs"),
]
