"""The probe deploy/ runs: ``python -m config.healthprobe [URL]`` asks ``/health/`` (config.health) and
exits 0 when every check is OK, 1 otherwise, printing the failing checks. Standard library only (no
Django start-up): compose's healthcheck and systemd's hall-health.timer run it every few seconds.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request


def probe_host() -> str:
    """The first of ``ALLOWED_HOSTS`` (``.hall.es`` names ``hall.es``; ``*``: localhost), so the probe is an
    allowed request whatever address it reaches the server on."""
    first = os.environ.get("ALLOWED_HOSTS", "*").split(",")[0].strip().lstrip(".")
    return "localhost" if first in ("", "*") else first


def main(argv: list[str]) -> int:
    url = argv[1] if len(argv) > 1 else os.environ.get("HALL_HEALTH_URL", "http://127.0.0.1:8000/health/")
    if not url.startswith(("http://", "https://")):
        print(f"not an http(s) URL: {url}", file=sys.stderr)
        return 1
    headers = {"Host": probe_host(), "Accept": "application/json"}
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 (checked above)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
            answers = json.load(response)
    except urllib.error.HTTPError as failed:
        try:
            answers = json.load(failed)
        except ValueError:
            print(f"/health/ answered {failed.code}", file=sys.stderr)
            return 1
    except (OSError, ValueError) as exc:
        print(f"/health/ did not answer: {exc}", file=sys.stderr)
        return 1
    bad = {name: text for name, text in answers.items() if text != "OK"}
    for name, text in bad.items():
        print(f"{name}: {text}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
