"""The plan form: shape and choices only; the service decides what is allowed."""

from django import forms
from django.utils.translation import gettext_lazy as _

from drills.adapters import SIMULATOR_FAULTS
from runbooks.catalog import load_catalog


class DrillPlanForm(forms.Form):
    # Labels spelled out (the words Django would derive from the names) to translate them.
    runbook = forms.ChoiceField(choices=(), label=_("Runbook"))
    title = forms.CharField(max_length=200, required=False, label=_("Title"))
    namespace = forms.CharField(max_length=253, initial="llm-serving", label=_("Namespace"))
    lws = forms.CharField(max_length=253, initial="vllm-chat", label="LeaderWorkerSet")
    fault = forms.ChoiceField(choices=[(f, f) for f in SIMULATOR_FAULTS], label=_("Fault"))
    expected_branch = forms.CharField(max_length=100, required=False, label=_("Expected branch"))
    max_duration_seconds = forms.IntegerField(
        initial=1800, min_value=10, max_value=86400, label=_("Max duration seconds")
    )
    detect_within_seconds = forms.IntegerField(
        initial=300, min_value=10, max_value=86400, label=_("Detect within seconds")
    )
    acknowledge_within_seconds = forms.IntegerField(
        initial=300, min_value=10, max_value=86400, label=_("Acknowledge within seconds")
    )
    recover_within_seconds = forms.IntegerField(
        initial=1200, min_value=10, max_value=86400, label=_("Recover within seconds")
    )
    stop_on_real_sev1 = forms.BooleanField(
        required=False, initial=True, label=_("Stop on real sev1")
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        runbook = self.fields["runbook"]
        assert isinstance(runbook, forms.ChoiceField)
        runbook.choices = [(rb.slug, rb.slug) for rb in load_catalog().all()]
