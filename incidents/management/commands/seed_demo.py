"""Create the demo admin and a few realistic incidents for the embedded run.

Idempotent: an existing admin keeps its password; incidents are only loaded into an
empty database. The incidents go through the real ingestion service, so they look
exactly like what Alertmanager would have produced.
"""

import json
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from console import roles
from incidents import services
from incidents.ingest.parse import ReceiptMeta, labels_fingerprint, parse_payload
from incidents.models import Incident

GO_ZERO = "0001-01-01T00:00:00Z"

# (alertname, runbook, severity, summary, pods, resolved?)
SAMPLES = [
    ("VLLMHighTTFT", "ttft-spike", "critical", "TTFT p99 9.8s on vllm-chat (10x normal)",
     ["vllm-chat-0", "vllm-chat-1", "vllm-chat-2"], False),
    ("VLLMEngineStalled", "nccl-hang", "critical",
     "vllm-chat group 3: 12 running requests, 0 tokens/s for 5m", ["vllm-chat-3"], False),
    ("VLLMPrefixCacheHitRateDrop", "prefix-cache-drop", "warning",
     "Prefix cache hit rate fell from 81% to 6%", ["vllm-chat-0", "vllm-chat-1"], True),
    ("GPUECCErrors", "ecc-errors", "warning",
     "Double-bit ECC errors on gpu-node-4 GPU 2", ["vllm-chat-5"], False),
]  # fmt: skip


def _body(alertname, runbook, severity, summary, pods, status, started):
    alerts = []
    for pod in pods:
        labels = {
            "alertname": alertname, "severity": severity, "runbook": runbook,
            "namespace": "llm-serving", "lws": "vllm-chat", "pod": pod,
        }  # fmt: skip
        if runbook == "ecc-errors":
            labels["node"] = "gpu-node-4"
        alerts.append({
            "status": status, "labels": labels,
            "annotations": {"summary": summary, "description": f"{summary} ({pod})"},
            "startsAt": started.isoformat().replace("+00:00", "Z"),
            "endsAt": (started + timedelta(minutes=9)).isoformat().replace("+00:00", "Z")
            if status == "resolved" else GO_ZERO,
            "generatorURL": f"{settings.PROMETHEUS_URL}/graph?g0.expr={alertname}",
            "fingerprint": labels_fingerprint(labels),
        })  # fmt: skip
    return {
        "receiver": "incident-console", "status": status, "alerts": alerts,
        "groupLabels": {"alertname": alertname, "lws": "vllm-chat"},
        "commonLabels": {"alertname": alertname}, "commonAnnotations": {"summary": summary},
        "externalURL": "http://127.0.0.1:9093", "version": "4",
        "groupKey": f'{{}}:{{alertname="{alertname}", lws="vllm-chat"}}', "truncatedAlerts": 0,
    }  # fmt: skip


class Command(BaseCommand):
    help = "Create the demo admin (password printed) and load sample incidents if empty."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")
        parser.add_argument("--password", default="", help="default: random, kept in var/")

    def handle(self, *args, username, password, **options):
        roles.roles_sync()
        password = self._admin(username, password)
        # A second person: risky actions and SEV1 incidents need someone other than the
        # requester to approve, so the demo needs two logins.
        approver = self._user("commander", roles.COMMANDER, "demo_commander_password")
        loaded = 0 if Incident.objects.exists() else self._incidents()
        self.stdout.write(json.dumps({"username": username, "password": password,
                                      "approver": {"username": "commander",
                                                   "password": approver},
                                      "incidents_loaded": loaded}))  # fmt: skip

    def _admin(self, username: str, password: str) -> str:
        return self._user(username, roles.ADMIN, "demo_admin_password", password, superuser=True)

    def _user(self, username, role, file, password="", *, superuser=False) -> str:
        stored = settings.VAR_DIR / file
        User = get_user_model()
        user = User.objects.filter(username=username).first()
        if user is not None:
            return stored.read_text().strip() if stored.exists() else "(unchanged)"
        password = password or secrets.token_urlsafe(9)
        create = User.objects.create_superuser if superuser else User.objects.create_user
        user = create(username=username, password=password, email="")
        user.groups.add(Group.objects.get(name=role))
        settings.VAR_DIR.mkdir(parents=True, exist_ok=True)
        stored.write_text(password)
        stored.chmod(0o600)
        return password

    @transaction.atomic
    def _incidents(self) -> int:
        now = timezone.now().replace(microsecond=0)
        for i, (name, slug, sev, summary, pods, done) in enumerate(SAMPLES):
            started = now - timedelta(minutes=50 - 10 * i)
            for status in ("firing", "resolved") if done else ("firing",):
                body = _body(name, slug, sev, summary, pods, status, started)
                text = json.dumps(body)
                services.alerts_ingest(
                    payload=parse_payload(body),
                    meta=ReceiptMeta(body=text, body_bytes=len(text), source="demo"),
                )
        return len(SAMPLES)
