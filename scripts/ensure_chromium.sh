#!/usr/bin/env bash
# Make sure Debian's chromium (and a font, or pages render as boxes) is installed for the Playwright
# tests, which launch it with executable_path=/usr/bin/chromium (`playwright install` cannot download
# browsers here), gettext, whose msgfmt/xgettext the catalogue tests run, and poppler-utils and zbar-tools
# (pdftoppm, zbarimg) for the printed-card tests. Installs with apt-get when
# root; otherwise says how and fails.
set -euo pipefail

CHROMIUM=/usr/bin/chromium
FONT_PACKAGE=fonts-dejavu-core

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

missing=()
[[ -x "$CHROMIUM" ]] || missing+=(chromium)
installed "$FONT_PACKAGE" || missing+=("$FONT_PACKAGE")
command -v msgfmt >/dev/null 2>&1 && command -v xgettext >/dev/null 2>&1 || missing+=(gettext)
# The paper-card tests turn printed sheets into pictures (pdftoppm) and read their QR codes back (zbarimg).
command -v pdftoppm >/dev/null 2>&1 || missing+=(poppler-utils)
command -v zbarimg >/dev/null 2>&1 || missing+=(zbar-tools)

if ((${#missing[@]})); then
  if [[ "$(id -u)" -ne 0 ]]; then
    echo "error: missing ${missing[*]} (the browser tests drive $CHROMIUM)." >&2
    echo "       Install them as root:  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo ">> installing ${missing[*]} from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q "${missing[@]}"
fi

if [[ ! -x "$CHROMIUM" ]]; then
  echo "error: $CHROMIUM still missing after install" >&2
  exit 1
fi

# Smoke test: a headless start that renders a page. Flags as the tests use them; the
# background-networking ones keep chromium from dialling out on this closed network.
profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
if ! out="$(timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
      --disable-background-networking --disable-component-update --disable-sync \
      --user-data-dir="$profile" --dump-dom about:blank 2>/dev/null)" || [[ "$out" != *"<html"* ]]; then
  echo "error: $CHROMIUM did not render about:blank headless; try it by hand:" >&2
  echo "       $CHROMIUM --headless --no-sandbox --disable-gpu --dump-dom about:blank" >&2
  exit 1
fi
echo "ok: $("$CHROMIUM" --version 2>/dev/null) with $FONT_PACKAGE"
