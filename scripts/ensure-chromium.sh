#!/bin/sh
# Make sure a chromium is there for the inspector's browser tests: install Debian's when it is missing and this
# machine lets us (root and apt-get). Never fails the build: without a browser those tests skip and say why.
for name in chromium chromium-browser; do
    command -v "$name" >/dev/null 2>&1 && exit 0
done
if [ -n "${BOWERBIRD_CHROMIUM:-}" ] && [ -x "$BOWERBIRD_CHROMIUM" ]; then
    exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "chromium not found and not installable here (needs root and apt-get): the browser tests will skip" >&2
    exit 0
fi
echo "installing Debian's chromium for the browser tests ..." >&2
if DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 &&
   DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1; then
    echo "chromium installed" >&2
else
    echo "could not install chromium: the browser tests will skip" >&2
fi
exit 0
