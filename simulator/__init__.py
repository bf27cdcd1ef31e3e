"""A vLLM fleet simulator: a TEST DOUBLE for a Kubernetes cluster running vLLM.

No Kubernetes API server or GPU fleet exists on the machines where the demo and the tests
run, so this package stands in for both: it serves the slice of the
Kubernetes API that the console's actions use, exports metrics with the names, types and
labels of the real exporters (vLLM, DCGM, kube-state-metrics, the gateway), and moves
them with simple, seeded dynamics. The console never imports it; it talks to it over
HTTP only, as to the real thing.
"""
