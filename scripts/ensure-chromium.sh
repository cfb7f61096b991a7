#!/bin/sh
# The tests that open pages drive Debian's Chromium (packages/epicsperf/test/helpers/browser.ts): install it from
# Debian's packages when it is missing, so `npm test` sets up a fresh machine by itself.
set -eu
[ -n "${EPICSPERF_CHROMIUM:-}" ] && exit 0
command -v chromium >/dev/null 2>&1 && exit 0
echo "installing Debian's chromium for the browser tests" >&2
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
$sudo_cmd apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq chromium >/dev/null
