"""The cache: Redis when REDIS_URL is set, else Django's default (in-process memory)."""

from config.settings.env import env

REDIS_URL = env.str("REDIS_URL", default="")
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
            # Two consoles (or a bench beside one) sharing a Redis keep apart by prefix.
            "KEY_PREFIX": env.str("CACHE_KEY_PREFIX", default=""),
        }
    }
