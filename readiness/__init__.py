"""The pre-launch checklist: 15 items per deployment (namespace + LeaderWorkerSet), verified
from the Kubernetes API and Prometheus where the console can, signed off by a commander
where it cannot. Imports runbooks, incidents and console; nothing imports it."""
