"""Response shapes of the runbooks API (documentation and rendering, no input)."""

from rest_framework import serializers

from runbooks.triage import TRIAGE_STATES


class TriageCheckSerializer(serializers.Serializer):
    id = serializers.CharField()
    question = serializers.CharField()
    promql = serializers.CharField(help_text="The query as run (labels filled in).")
    value = serializers.FloatField(allow_null=True, help_text="null: no data, error or not run.")
    state = serializers.ChoiceField(choices=TRIAGE_STATES)
    comparator = serializers.CharField()
    threshold = serializers.FloatField()
    unit = serializers.CharField()
    message = serializers.CharField(allow_blank=True)


class BecauseSerializer(serializers.Serializer):
    check = serializers.CharField()
    state = serializers.CharField()


class DecisionSerializer(serializers.Serializer):
    branch = serializers.CharField(allow_blank=True)
    diagnosis = serializers.CharField(allow_blank=True)
    recommended_actions = serializers.ListField(child=serializers.CharField())
    because = BecauseSerializer(many=True)


class PrometheusStatusSerializer(serializers.Serializer):
    url = serializers.CharField()
    error = serializers.CharField(
        allow_blank=True, help_text='Why Prometheus could not answer; "" when it did.'
    )


class TriageSerializer(serializers.Serializer):
    incident = serializers.IntegerField()
    runbook = serializers.CharField(allow_blank=True, help_text='"" when no runbook matches.')
    title = serializers.CharField(allow_blank=True)
    message = serializers.CharField(allow_blank=True)
    checks = TriageCheckSerializer(many=True)
    decision = DecisionSerializer()
    prometheus = PrometheusStatusSerializer()
    evaluated_at = serializers.DateTimeField()


def triage_data(result) -> dict:
    """A `TriageResult` as the API's JSON."""
    return {
        "incident": result.incident_id,
        "runbook": result.runbook_slug,
        "title": result.runbook_title,
        "message": result.message,
        "checks": [_check_data(c) for c in result.checks],
        "decision": {
            "branch": result.branch_id,
            "diagnosis": result.diagnosis,
            "recommended_actions": list(result.recommended_actions),
            "because": [{"check": c, "state": s} for c, s in result.because],
        },
        "prometheus": {"url": result.prometheus_url, "error": result.prometheus_error},
        "evaluated_at": result.evaluated_at,
    }


def _check_data(c) -> dict:
    fields = ("id", "question", "promql", "value", "state", "comparator", "threshold", "unit",
              "message")  # fmt: skip
    return {f: getattr(c, f) for f in fields}
