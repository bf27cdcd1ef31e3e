"""Embedded mode's broker never hands a consumer a half-written message.

Found at real speed: kombu's filesystem transport creates a message file and then writes
it; the worker listed the folder in between, read an empty file, died on the JSON and
took `make run`'s stack down mid-outage (celery/kombu#1551). The first test failed with
kombu's own channel (JSONDecodeError); console/localstack/fs_broker.py writes then
renames."""

import threading

import pytest
from kombu import Connection
from kombu.transport import filesystem

from console.localstack import fs_broker


@pytest.fixture
def channel(tmp_path):
    folder = tmp_path / "queue"
    folder.mkdir()
    options = {"data_folder_in": str(folder), "data_folder_out": str(folder),
               "processed_folder": str(tmp_path / "done"), "store_processed": False,
               "control_folder": str(tmp_path / "control")}  # fmt: skip
    with Connection("filesystem://", transport_options=options) as conn:
        yield conn.default_channel


def test_filesystem_urls_use_the_whole_message_transport(channel):
    assert isinstance(channel, fs_broker.Channel)


def test_a_message_being_written_is_not_taken(channel, monkeypatch):
    writing, go_on = threading.Event(), threading.Event()
    real_dumps = fs_broker.dumps

    def slow_dumps(payload):  # the body is being produced while a consumer looks
        writing.set()
        go_on.wait(5)
        return real_dumps(payload)

    monkeypatch.setattr(fs_broker, "dumps", slow_dumps)
    writer = threading.Thread(target=channel._put, args=("actions", {"body": "run #7"}))
    writer.start()
    assert writing.wait(5)
    with pytest.raises(filesystem.Empty):
        channel._get("actions")  # kombu's own channel: JSONDecodeError on an empty file
    go_on.set()
    writer.join(5)
    assert channel._get("actions") == {"body": "run #7"}
