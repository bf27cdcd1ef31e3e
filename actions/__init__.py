"""Self-service remediation actions: the six kinds, the Kubernetes client, permissions."""
