"""Two copies of the suite on one machine must not touch each other's Redis or database."""

import os

import pytest
from django.conf import settings
from django.db import connection

from tests.helpers import wait_for
from tests.integration.conftest import KEY_PREFIX, _forget_own_keys

pytestmark = pytest.mark.integration


@pytest.mark.django_db
def test_this_run_has_its_own_database_and_broker_prefix(require_postgres):
    run_id = os.environ["TEST_RUN_ID"]
    assert connection.settings_dict["NAME"] == f"test_console_{run_id}"
    assert f"test-{run_id}:" == KEY_PREFIX
    assert settings.CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"] == KEY_PREFIX


def test_cleaning_up_leaves_another_runs_keys_alone(redis_broker):
    other = "test-another-run:celery"
    redis_broker.set(other, "their queue")
    redis_broker.set(KEY_PREFIX + "celery", "our queue")
    try:
        _forget_own_keys(redis_broker)
        assert redis_broker.get(other) == b"their queue"
        assert redis_broker.get(KEY_PREFIX + "celery") is None
    finally:
        redis_broker.delete(other)


@pytest.mark.django_db(transaction=True)
def test_a_worker_takes_only_this_runs_messages(redis_broker, celery_worker_process, make_user):
    """A task queued under another run's prefix stays queued while our worker replays ours."""
    from celery import current_app

    from incidents import services
    from incidents.models import WebhookReceipt
    from tests.integration.test_worker_redis import failed_receipt

    foreign = "test-another-run:"
    with current_app.connection_for_write() as conn:
        conn.transport_options["global_keyprefix"] = foreign
        producer = current_app.amqp.Producer(conn)
        current_app.send_task("incidents.tasks.webhook_receipt_replay", args=[1, 1],
                              queue="default", producer=producer)  # fmt: skip
    try:
        assert redis_broker.llen(foreign + "default") == 1
        original = failed_receipt()
        commander = make_user("cmd", role="commander")
        services.webhook_receipt_replay_request(receipt_id=original.pk, actor=commander)
        wait_for(lambda: WebhookReceipt.objects.filter(replay_of=original).exists(),
                 timeout=30, what="our worker to replay our receipt")  # fmt: skip
        assert redis_broker.llen(foreign + "default") == 1, "our worker took another run's task"
    finally:
        for key in redis_broker.scan_iter(match=foreign + "*"):
            redis_broker.delete(key)
