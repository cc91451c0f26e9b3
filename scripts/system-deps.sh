#!/usr/bin/env bash
# System packages the tests need: redis-server (state tests) and Chromium (playground browser test).
# Installed from Debian packages when missing and we are root; otherwise those tests skip with a reason.
set -uo pipefail
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
# Chromium for the playground browser tests (driven by Playwright, never a downloaded browser); the fonts make
# the Korean text and the 👍/👎 buttons legible in its screenshots (test-artifacts/playground*.png).
command -v chromium >/dev/null 2>&1 || missing+=(chromium chromium-driver)
# A Hangul font whenever none is installed, whether Chromium was already there or not (the playground in any
# browser on this machine needs one too).
fc-list :lang=ko 2>/dev/null | grep -q . || missing+=(fontconfig fonts-nanum fonts-noto-color-emoji)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "==> installing ${missing[*]} from Debian packages"
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null \
    || echo "warning: could not install ${missing[*]}; the tests that need them will skip" >&2
else
  echo "note: ${missing[*]} not installed and no root/apt-get; the tests that need them will skip" >&2
fi
exit 0
