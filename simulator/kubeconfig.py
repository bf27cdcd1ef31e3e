"""Write a kubeconfig for the simulated cluster, so clients load it unchanged.

`kubernetes.config.load_kube_config(config_file=path)` reads it as is. kubectl (client-go)
only sends a bearer token over TLS, so for kubectl the server must serve https and the
kubeconfig must name its CA (`certificate_authority_data`) or skip verification. The file
holds a token, so it is written owner-readable only (0600), atomically.
"""

from __future__ import annotations

import base64
import os
import tempfile
from pathlib import Path

import yaml


def kubeconfig_dict(
    *,
    server: str,
    token: str,
    namespace: str = "llm-serving",
    context: str = "vllm-sim",
    user: str = "console-worker",
    certificate_authority_data: bytes | None = None,
    insecure_skip_tls_verify: bool = False,
) -> dict:
    cluster: dict = {"server": server}
    if certificate_authority_data:
        cluster["certificate-authority-data"] = base64.b64encode(
            certificate_authority_data
        ).decode()
    if insecure_skip_tls_verify:
        cluster["insecure-skip-tls-verify"] = True
    user_name = f"{user}@{context}"
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": [{"name": context, "cluster": cluster}],
        "users": [{"name": user_name, "user": {"token": token}}],
        "contexts": [
            {
                "name": context,
                "context": {"cluster": context, "user": user_name, "namespace": namespace},
            }
        ],
        "current-context": context,
    }


def write_kubeconfig(
    path,
    *,
    server: str,
    token: str,
    namespace: str = "llm-serving",
    context: str = "vllm-sim",
    user: str = "console-worker",
    certificate_authority_data: bytes | None = None,
    insecure_skip_tls_verify: bool = False,
) -> None:
    """Write (atomically, mode 0600) a kubeconfig pointing at `server` with `token`.

    `certificate_authority_data` is the PEM of the CA that signed an https server's cert.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    document = kubeconfig_dict(
        server=server,
        token=token,
        namespace=namespace,
        context=context,
        user=user,
        certificate_authority_data=certificate_authority_data,
        insecure_skip_tls_verify=insecure_skip_tls_verify,
    )
    fd, tmp = tempfile.mkstemp(prefix=".kubeconfig-", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yaml.safe_dump(document, handle, sort_keys=False)
        os.chmod(tmp, 0o600)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
