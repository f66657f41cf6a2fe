"""HALL_ENV=production (issue 10): the hall refuses to start without its own SECRET_KEY, ALLOWED_HOSTS,
HALL_AUDIT_KEY, HALL_CARD_SECRET (issue 26: the paper cards' security codes) and HALL_REGISTER_KEY (issue 27:
the prohibited registers' keyed entries), and with them
`manage.py check --deploy` is clean: TLS-only cookies, HSTS, HTTPS redirect, the proxy's scheme header.
Anything else (development, the demo, these tests) keeps the demo defaults."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
REQUIRED = ("SECRET_KEY", "ALLOWED_HOSTS", "HALL_AUDIT_KEY", "HALL_CARD_SECRET", "HALL_REGISTER_KEY")
PRODUCTION = {
    "HALL_ENV": "production",
    "SECRET_KEY": secrets.token_urlsafe(50),
    "HALL_AUDIT_KEY": secrets.token_urlsafe(50),
    "HALL_CARD_SECRET": secrets.token_urlsafe(50),
    "HALL_REGISTER_KEY": secrets.token_urlsafe(50),
    "ALLOWED_HOSTS": "hall.example.es",
    "CSRF_TRUSTED_ORIGINS": "https://hall.example.es",
    "HALL_AUTHORITY_URL": "https://authority.example.es/hall",  # else door.W001: notices not sent
    "HALL_DRAW_SEED_PUBLIC_KEY": secrets.token_hex(32),  # issue 28: the workers' key the seeds are sealed to
}


def manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in {"HALL_ENV", "DEBUG", *REQUIRED}}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("missing", "value"),
    [
        ("SECRET_KEY", ""),
        ("SECRET_KEY", "CHANGE-ME"),
        ("SECRET_KEY", "insecure-x"),
        ("ALLOWED_HOSTS", ""),
        ("HALL_AUDIT_KEY", ""),
        ("HALL_CARD_SECRET", ""),
        ("HALL_CARD_SECRET", "CHANGE-ME"),
        ("HALL_CARD_SECRET", "insecure-demo-key-set-SECRET_KEY-in-production"),
        ("HALL_REGISTER_KEY", ""),
        ("HALL_REGISTER_KEY", "CHANGE-ME"),
        ("HALL_REGISTER_KEY", "insecure-demo-key-set-SECRET_KEY-in-production"),
    ],
)
def test_production_refuses_to_start_without_its_own_key_and_hosts(missing: str, value: str) -> None:
    done = manage("check", **{**PRODUCTION, missing: value})
    assert done.returncode != 0
    assert f"HALL_ENV=production needs its own {missing}" in done.stderr


def test_the_deploy_check_refuses_the_placeholder_card_secret() -> None:
    """deploy/env.example's placeholder as it is copied: `check --deploy` fails naming the card secret."""
    done = manage("check", "--deploy", **{**PRODUCTION, "HALL_CARD_SECRET": "CHANGE-ME"})
    assert done.returncode != 0
    assert "HALL_ENV=production needs its own HALL_CARD_SECRET" in done.stderr
    left_out = {k: v for k, v in PRODUCTION.items() if k != "HALL_CARD_SECRET"}
    done = manage("check", "--deploy", **left_out)  # not the SECRET_KEY by default either
    assert done.returncode != 0
    assert "HALL_ENV=production needs its own HALL_CARD_SECRET" in done.stderr


def test_production_passes_the_deploy_checks() -> None:
    done = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "security.W" not in done.stdout + done.stderr


def test_the_deploy_check_asks_for_the_draws_public_key() -> None:
    """Without the workers' public key no RNG game could commit its draw: `check --deploy` says so."""
    left_out = {k: v for k, v in PRODUCTION.items() if k != "HALL_DRAW_SEED_PUBLIC_KEY"}
    done = manage("check", "--deploy", **left_out)
    assert done.returncode != 0
    assert "bingo.E201" in done.stdout + done.stderr and "draw_seed_key" in done.stdout + done.stderr


def test_production_settings_are_secure() -> None:
    probe = (
        "from django.conf import settings as s; "
        "print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_SSL_REDIRECT, "
        "s.SECURE_HSTS_SECONDS > 0, s.SECURE_PROXY_SSL_HEADER, s.ALLOWED_HOSTS)"
    )
    done = manage("shell", "-c", probe, **PRODUCTION)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == (
        "True True True True ('HTTP_X_FORWARDED_PROTO', 'https') ['hall.example.es']"
    )


def test_outside_production_the_demo_defaults_stay() -> None:
    assert settings.HALL_ENV != "production"
    assert settings.SECRET_KEY.startswith("insecure-") or "SECRET_KEY" in os.environ
    assert not settings.SESSION_COOKIE_SECURE


# Run in the production process: every production module imported (the Celery tasks as the worker finds
# them), then what of the demo the settings, the beat, the URLs and the imports hold.
NO_DEMO_PROBE = """
import importlib, json, pkgutil, sys
from django.conf import settings
from django.urls import URLPattern, URLResolver, get_resolver
from config.celery import app

app.loader.import_default_modules()
for package in ("config", "halls", "jackpots", "bingo", "machines"):
    root = importlib.import_module(package)
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        importlib.import_module(info.name)

def views(patterns):
    for p in patterns:
        if isinstance(p, URLResolver):
            yield getattr(p.urlconf_module, "__name__", str(p.urlconf_module))
            yield from views(p.url_patterns)
        elif isinstance(p, URLPattern):
            yield getattr(p.callback, "__module__", "") + "." + getattr(p.callback, "__name__", "")

beat = {**settings.CELERY_BEAT_SCHEDULE, **app.conf.beat_schedule}
print(json.dumps({
    "apps": [a for a in settings.INSTALLED_APPS if a.split(".")[0] == "demo"],
    "beat": [k for k, v in beat.items() if "demo" in k or v["task"].startswith("demo.")],
    "urls": [u for u in views(get_resolver().url_patterns) if u.split(".")[0] == "demo"],
    "tasks": [t for t in app.tasks if t.startswith("demo.")],
    "modules": sorted(m for m in sys.modules if m.split(".")[0] == "demo"),
    "imported": sum(1 for m in sys.modules if m.split(".")[0] in ("halls", "jackpots", "bingo", "machines")),
}))
"""


def test_production_loads_no_demo_code() -> None:
    done = manage("shell", "-c", NO_DEMO_PROBE, **PRODUCTION)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found.pop("imported") > 100  # every production module was imported
    assert found == {"apps": [], "beat": [], "urls": [], "tasks": [], "modules": []}


def test_outside_production_the_demo_is_installed_with_its_beat() -> None:
    assert "demo" in settings.INSTALLED_APPS
    assert {"demo.tasks.autoplay_rooms", "demo.tasks.autoplay_tables"} <= {
        entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()
    }
