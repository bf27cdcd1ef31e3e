"""kombu's filesystem transport, with messages that appear whole (embedded mode's broker).

kombu writes a message file in place: it creates `<n>_<uuid>.<queue>.msg`, then writes
the body. A consumer listing the folder in between moves the empty file away, reads
nothing and dies on the JSON ("Expecting value"), and the body is then written into a
file nobody reads (celery/kombu#1551). Seen on a busy machine: the worker of `make run`
died mid-outage and took the console's stack down. Here the body is written under a name
no consumer takes (`.tmp` after `.msg`) and renamed into place, which is atomic within
the folder. config/celery.py makes `filesystem://` use this transport.
"""

from __future__ import annotations

import os
import uuid
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    # kombu's filesystem channel names the argument `payload`, its base `message`: the
    # same override mypy reports for kombu itself.
    def _put(self, queue, payload, **kwargs):  # type: ignore[override]
        """Put `payload` on `queue`: written in full, then renamed to a consumer's name."""
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = final + ".tmp"  # partition('.')[2] is "<queue>.msg.tmp": never taken
        try:
            with open(partial, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel
