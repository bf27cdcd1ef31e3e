"""Print (JSON) the environment variables config/settings/*.py read, in order.

Run as a script by test_k8s_manifests.py: it counts reads made by the settings module
itself (directly or through django-environ), not by the libraries it imports, so
f-string names such as OIDC_<ROLE>_GROUPS are seen too.
"""

import json
import os
import sys
from types import FrameType

sys.path.insert(0, os.getcwd())
SETTINGS_DIR = os.path.join(os.getcwd(), "config", "settings")
seen: list[str] = []
_getitem = os._Environ.__getitem__


def _spy(self, key):
    frame: FrameType | None = sys._getframe(1)
    while frame and (
        frame.f_code.co_filename.endswith(("os.py", "_collections_abc.py"))
        or f"{os.sep}environ{os.sep}" in frame.f_code.co_filename
    ):
        frame = frame.f_back
    # config/settings/__init__.py and the modules it assembles (config/settings/*.py).
    name = frame.f_code.co_filename if frame else ""
    if os.path.dirname(os.path.abspath(name)) == SETTINGS_DIR and key not in seen:
        seen.append(key)
    return _getitem(self, key)


os._Environ.__getitem__ = _spy  # type: ignore[method-assign]
import config.settings  # noqa: E402, F401

print(json.dumps(seen))
