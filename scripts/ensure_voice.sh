#!/usr/bin/env bash
# Make sure espeak-ng (Debian's package, with its Spanish voice) is installed, then generate the caller's
# voice clips into HALL_VOICE_DIR (var/voice by default) with `manage.py build_voice`: offline, once, only
# what changed (bingo/traditional/voicefiles.py). Installs with apt-get when root; otherwise says how and fails.
# --install-only: the engine only (the demo then runs build_voice itself, in the background: demo/voice.py).
set -euo pipefail

PY="${PY:-.venv/bin/python}"

if ! command -v espeak-ng >/dev/null 2>&1; then
  if [[ "$(id -u)" -ne 0 ]]; then
    echo "error: espeak-ng is missing (the caller's voice is generated with it)." >&2
    echo "       Install it as root:  sudo apt-get update && sudo apt-get install -y espeak-ng" >&2
    exit 1
  fi
  echo ">> installing espeak-ng from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q espeak-ng
fi
if ! espeak-ng --voices=es | grep -q ' es '; then
  echo "error: espeak-ng has no Spanish voice (es)" >&2
  exit 1
fi
if [[ "${1:-}" == "--install-only" ]]; then
  exit 0
fi
"$PY" manage.py build_voice
