"""Response shapes of the runbooks API (documentation and rendering, no input)."""

from rest_framework import serializers

from runbooks.prometheus_texts import prometheus_text_api
from runbooks.triage import TRIAGE_STATES
from runbooks.units import unit_word

I18N_HELP = (
    "The ids and parameters of the field beside it ([{id, params}]), for a client that "
    "words it itself; null when it has none."
)


class TriageCheckSerializer(serializers.Serializer):
    id = serializers.CharField()
    question = serializers.CharField()
    promql = serializers.CharField(help_text="The query as run (labels filled in).")
    value = serializers.FloatField(allow_null=True, help_text="null: no data, error or not run.")
    state = serializers.ChoiceField(choices=TRIAGE_STATES)
    comparator = serializers.CharField()
    threshold = serializers.FloatField()
    unit = serializers.CharField(help_text='As the runbook catalogue writes it ("ratio", "s").')
    unit_label = serializers.CharField(
        allow_blank=True,
        help_text='`unit` in words, in the request\'s language ("" for a yes/no reading).',
    )
    message = serializers.CharField(
        allow_blank=True,
        help_text="A note on the answer or why there is none, in the "
        "request's language (Prometheus' own text as it came).",
    )
    message_i18n = serializers.JSONField(allow_null=True, help_text=I18N_HELP)


class BecauseSerializer(serializers.Serializer):
    check = serializers.CharField()
    state = serializers.CharField()


class RecommendedActionSerializer(serializers.Serializer):
    index = serializers.IntegerField(
        help_text="The action's number in the runbook's emergency actions (the page's button)."
    )
    kind = serializers.CharField()
    title = serializers.CharField()
    why = serializers.CharField(allow_blank=True)
    params = serializers.DictField(
        child=serializers.JSONField(),
        help_text="Filled from the alert labels as the page's button fills them: POST "
        "{kind, params, idempotency_key} to /api/v1/incidents/{id}/actions/ to request it.",
    )
    needs_labels = serializers.ListField(
        child=serializers.CharField(),
        help_text='Placeholders no alert label fills; they stay in `params` as "{pod}" '
        "for you to replace.",
    )
    requires_approval = serializers.BooleanField(
        allow_null=True,
        help_text="Whether a commander other than the requester must approve, as the "
        "approval policy decides before reading the cluster (the request reads it and can "
        "add a reason; POST .../actions/preview/ shows that answer). null: not decided, "
        "because the parameters are incomplete or invalid.",
    )
    approval_reason = serializers.CharField(
        allow_blank=True,
        help_text="Why a second person must approve, or why it is not decided, in the "
        "request's language.",
    )
    approval_reason_i18n = serializers.JSONField(allow_null=True, help_text=I18N_HELP)


class DecisionSerializer(serializers.Serializer):
    branch = serializers.CharField(allow_blank=True)
    diagnosis = serializers.CharField(allow_blank=True)
    recommended_actions = serializers.ListField(
        child=serializers.CharField(), help_text="The recommended action kinds."
    )
    recommended = RecommendedActionSerializer(
        many=True, help_text="The recommended actions, ready to request."
    )
    because = BecauseSerializer(many=True)


class PrometheusStatusSerializer(serializers.Serializer):
    url = serializers.CharField()
    error = serializers.CharField(
        allow_blank=True,
        help_text='Why Prometheus could not answer, in the request\'s language; "" when it did.',
    )
    error_i18n = serializers.JSONField(allow_null=True, help_text=I18N_HELP)


class TriageLeadSerializer(serializers.Serializer):
    incident = serializers.IntegerField()
    runbook = serializers.CharField(allow_blank=True)
    triage = serializers.CharField(help_text="The lead's triage: GET it for the fix to request.")


class TriageSerializer(serializers.Serializer):
    incident = serializers.IntegerField()
    lead = TriageLeadSerializer(
        allow_null=True,
        required=False,
        help_text="The open incident this one is part of (incidents/related): its runbook "
        "drives triage, so request its recommended actions there, on the lead. null when "
        "this incident leads or stands alone.",
    )
    runbook = serializers.CharField(allow_blank=True, help_text='"" when no runbook matches.')
    title = serializers.CharField(allow_blank=True)
    message = serializers.CharField(
        allow_blank=True,
        help_text="Why there is no triage (no runbook matches), in the request's language.",
    )
    message_i18n = serializers.JSONField(allow_null=True, help_text=I18N_HELP)
    checks = TriageCheckSerializer(many=True)
    decision = DecisionSerializer()
    prometheus = PrometheusStatusSerializer()
    evaluated_at = serializers.DateTimeField()


def triage_data(result, recommended=()) -> dict:
    """A `TriageResult` and its `RecommendedAction`s as the API's JSON."""
    return {
        "incident": result.incident_id,
        "runbook": result.runbook_slug,
        "title": result.runbook_title,
        **_message_data(result.message),
        "checks": [_check_data(c) for c in result.checks],
        "decision": {
            "branch": result.branch_id,
            "diagnosis": result.diagnosis,
            "recommended_actions": list(result.recommended_actions),
            "recommended": [_recommended_data(a) for a in recommended],
            "because": [{"check": c, "state": s} for c, s in result.because],
        },
        "prometheus": {"url": result.prometheus_url, **_error_data(result.prometheus_error)},
        "evaluated_at": result.evaluated_at,
    }


def _error_data(text: str) -> dict:
    error, ids = prometheus_text_api(text)
    return {"error": error, "error_i18n": ids}


def _message_data(text: str) -> dict:
    message, ids = prometheus_text_api(text)
    return {"message": message, "message_i18n": ids}


def _check_data(c) -> dict:
    fields = ("id", "question", "promql", "value", "state", "comparator", "threshold", "unit")
    return {
        **{f: getattr(c, f) for f in fields},
        "unit_label": unit_word(c.unit),
        **_message_data(c.message),
    }


def _recommended_data(a) -> dict:
    return a.as_api()  # approval_reason in the request's language, with its _i18n
