"""The plan form: shape and choices only; the service decides what is allowed."""

from django import forms

from runbooks.catalog import load_catalog
from runbooks.drills.adapters import SIMULATOR_FAULTS


class DrillPlanForm(forms.Form):
    runbook = forms.ChoiceField(choices=())
    title = forms.CharField(max_length=200, required=False)
    namespace = forms.CharField(max_length=253, initial="llm-serving")
    lws = forms.CharField(max_length=253, initial="vllm-chat", label="LeaderWorkerSet")
    fault = forms.ChoiceField(choices=[(f, f) for f in SIMULATOR_FAULTS])
    expected_branch = forms.CharField(max_length=100, required=False)
    max_duration_seconds = forms.IntegerField(initial=1800, min_value=10, max_value=86400)
    detect_within_seconds = forms.IntegerField(initial=300, min_value=10, max_value=86400)
    acknowledge_within_seconds = forms.IntegerField(initial=300, min_value=10, max_value=86400)
    recover_within_seconds = forms.IntegerField(initial=1200, min_value=10, max_value=86400)
    stop_on_real_sev1 = forms.BooleanField(required=False, initial=True)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        runbook = self.fields["runbook"]
        assert isinstance(runbook, forms.ChoiceField)
        runbook.choices = [(rb.slug, rb.slug) for rb in load_catalog().all()]
