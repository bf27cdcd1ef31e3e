"""The single-machine stack `make run` starts (console/management/commands/runstack.py):

- supervisor.py: starts the processes and stops them all, with whatever they started,
  when one exits or on Ctrl-C / SIGTERM;
- processes.py: ties a child's life to its parent's (also the worker's embedded beat,
  config/celery.py);
- monitoring.py: the Prometheus and Alertmanager configs of the demo loop.
"""
