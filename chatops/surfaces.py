"""The transport for an installation (chatops/transport.py says what one does)."""

from chatops.mattermost.client import MattermostTransport
from chatops.models import Surface, Workspace
from chatops.slack.client import SlackTransport
from chatops.transport import Transport


def transport_for(workspace: Workspace) -> Transport:
    if workspace.surface == Surface.MATTERMOST:
        return MattermostTransport(workspace)
    return SlackTransport(workspace)
