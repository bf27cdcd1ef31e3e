"""The registries chat listens on, connected from ChatopsConfig.ready()."""

from chatops.threads.receivers import timeline_appended_receive
from incidents.timeline_signal import timeline_appended


def connect() -> None:
    # The timeline's entries become posts in the incident's chat threads (after commit).
    timeline_appended.connect(timeline_appended_receive, dispatch_uid="chatops.threads")
