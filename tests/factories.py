"""factory_boy factories for the incidents app."""

import factory
from django.utils import timezone

from incidents.models import Alert, Incident, TimelineEvent


class IncidentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Incident

    title = factory.Sequence(lambda n: f"VLLMHighTTFT: TTFT p99 above 2s ({n})")
    severity = "SEV2"
    status = "triggered"
    grouping_key = factory.Sequence(lambda n: f'{{}}:{{alertname="VLLMHighTTFT", n="{n}"}}')
    runbook = "ttft-spike"
    namespace = "llm-serving"
    triggered_at = factory.LazyFunction(timezone.now)
    started_at = factory.LazyFunction(timezone.now)


class AlertFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Alert

    incident = factory.SubFactory(IncidentFactory)
    fingerprint = factory.Sequence(lambda n: f"{n:016x}")
    starts_at = factory.LazyFunction(timezone.now)
    alertname = "VLLMHighTTFT"
    status = "firing"
    severity = "critical"
    labels = factory.LazyAttribute(
        lambda o: {"alertname": o.alertname, "severity": o.severity, "pod": "vllm-chat-0"}
    )
    annotations = factory.LazyFunction(lambda: {"summary": "TTFT p99 above 2s"})
    grouping_key = factory.LazyAttribute(lambda o: o.incident.grouping_key if o.incident else "")
    first_received_at = factory.LazyFunction(timezone.now)
    last_received_at = factory.LazyFunction(timezone.now)


class TimelineEventFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TimelineEvent

    incident = factory.SubFactory(IncidentFactory)
    kind = "note"
    occurred_at = factory.LazyFunction(timezone.now)
    source = "console"
    message = factory.Sequence(lambda n: f"note {n}")
