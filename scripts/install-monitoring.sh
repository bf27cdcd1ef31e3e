#!/usr/bin/env bash
# Make sure Prometheus and Alertmanager (Debian/Ubuntu packages) are installed for the
# local demo loop. Installs them when it can (root with apt-get); otherwise prints the
# command to run and carries on: the console still runs without them.
set -u
missing=()
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
command -v prometheus-alertmanager >/dev/null 2>&1 || command -v alertmanager >/dev/null 2>&1 \
  || missing+=(prometheus-alertmanager)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${missing[*]} from the OS packages..."
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null && exit 0
  echo "apt-get failed; the console runs without the alert loop." >&2
else
  echo "Prometheus/Alertmanager missing. To get the full loop run:" >&2
  echo "  sudo apt-get install ${missing[*]}" >&2
fi
exit 0
