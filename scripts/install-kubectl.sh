#!/usr/bin/env bash
# Make sure kubectl (with kustomize v4 or newer) is installed: the manifest tests build
# deploy/k8s's overlays with `kubectl kustomize`, and a test reads the simulator's LWS
# with it. Installs from the OS packages when it can (root with apt-get): the `kubectl`
# package where an apt source offers it (the Kubernetes project's repository), else
# Debian's `kubernetes-client`, whose kustomize is older (the tests then say so).
set -u
command -v kubectl >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  apt-get update -qq
  pkg=kubernetes-client
  apt-cache policy kubectl 2>/dev/null | grep -q 'Candidate: [0-9]' && pkg=kubectl
  echo "installing $pkg (kubectl) from the OS packages..."
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" \
    >/dev/null && exit 0
  echo "apt-get install $pkg failed; the manifest tests will skip (or fail in CI)." >&2
else
  echo "kubectl missing. To run the manifest tests: sudo apt-get install kubectl" >&2
fi
exit 0
