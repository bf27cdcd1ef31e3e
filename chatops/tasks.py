"""Thin Celery tasks for chat (each takes a primary key and calls one service). All
idempotent: a request runs once (its row is claimed by a conditional UPDATE), a post is
sent once (claimed likewise), so a redelivered task does nothing."""

from celery import shared_task

from chatops import posts
from chatops.services import interactions

# A request may read Kubernetes (a preview), Prometheus (triage) and call the chat a few
# times (CHAT_TIMEOUT_SECONDS each); the limits stop a stuck one from holding a slot.
# interactions.RUN_LEASE is longer than the hard limit: a claim that old is a dead worker's.
RUN_SOFT, RUN_HARD = 100, 120
SEND_SOFT, SEND_HARD = 50, 60


@shared_task(
    name="chatops.tasks.interaction_run", acks_late=True, reject_on_worker_lost=True,
    soft_time_limit=RUN_SOFT, time_limit=RUN_HARD,
)  # fmt: skip
def interaction_run(interaction_id: int) -> None:
    interactions.interaction_run(interaction_id=interaction_id)


@shared_task(
    name="chatops.tasks.thread_flush", acks_late=True, reject_on_worker_lost=True,
    soft_time_limit=SEND_SOFT * 2, time_limit=SEND_HARD * 2,
)  # fmt: skip
def thread_flush(thread_id: int) -> None:
    posts.thread_flush(thread_id=thread_id)


@shared_task(
    name="chatops.tasks.post_send", acks_late=True, reject_on_worker_lost=True,
    soft_time_limit=SEND_SOFT, time_limit=SEND_HARD,
)  # fmt: skip
def post_send(post_id: int) -> None:
    posts.post_send(post_id=post_id)


@shared_task(name="chatops.tasks.posts_requeue", acks_late=True, soft_time_limit=50, time_limit=60)
def posts_requeue() -> int:
    # The beat that finds what a broker outage or a dead worker left behind: posts, and
    # requests from chat nobody ran.
    return posts.posts_requeue() + interactions.interactions_requeue()
