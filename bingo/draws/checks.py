"""Production must publish the workers' public key to the web processes (`manage.py draw_seed_key`)."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, register


@register(Tags.security, deploy=True)
def check_draw_seed_key(**kwargs: object) -> list[CheckMessage]:
    if settings.HALL_DRAW_SEED_PUBLIC_KEY or settings.HALL_EMBEDDED or not settings.HALL_VERIFIABLE_DRAWS:
        return []
    return [
        Error(
            "HALL_DRAW_SEED_PUBLIC_KEY is not set: the draws' seeds have no key to be sealed to.",
            hint="Run `manage.py draw_seed_key --file /etc/hall/draw-seed.key` once, give the file to the "
            "workers only (HALL_DRAW_SEED_KEY_FILE) and the printed line to every process.",
            id="bingo.E201",
        )
    ]
