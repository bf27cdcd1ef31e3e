"""Every outgoing chat message as a delivery with retries: recorded once, sent by the
worker, in order per thread (chatops/posts/services.py, flush.py)."""

from chatops.posts.flush import thread_flush
from chatops.posts.services import post_create, post_record, post_send, posts_requeue

__all__ = ["post_create", "post_record", "post_send", "posts_requeue", "thread_flush"]
