"""`{{ result.prometheus_error|prometheus_text }}`: an error or note of the Prometheus
client (runbooks/prometheus.py) in the viewer's language (runbooks/prometheus_texts.py);
any other text as it is."""

from django import template

from runbooks.prometheus_texts import prometheus_text as _worded

register = template.Library()


@register.filter
def prometheus_text(text: str) -> str:
    return _worded(str(text or ""))
