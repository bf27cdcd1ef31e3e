"""Is the console up, and is a Celery worker alive to run what it queues?

- probes.py: /healthz, /readyz and /readyz/worker, for kubelet and load balancers;
- heartbeat.py: the worker's consumer bootstep that beats (config/celery.py adds it);
- services.py: the heartbeat's writes (one row per worker, with the queues it consumes);
- selectors.py: who is alive, per queue, in one query (probes, banner, /metrics);
- banner.py: the page banner, and the counters of waiting work higher apps register.
"""
