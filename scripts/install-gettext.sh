#!/usr/bin/env bash
# GNU gettext (msgfmt) compiles the Chinese catalogue (locale/zh_Hans). Installs it when
# it can (root with apt-get); otherwise says how and exits 1, and the console runs in
# English only until it is there.
set -u
command -v msgfmt >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing gettext from the OS packages..."
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends gettext >/dev/null && exit 0
fi
echo "gettext (msgfmt) is missing, so the UI stays English. Run: sudo apt-get install gettext" >&2
exit 1
