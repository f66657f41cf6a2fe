"""The door's deploy checks (`manage.py check --deploy`)."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import CheckMessage, Tags, Warning, register


@register(Tags.compatibility, deploy=True)
def check_authority(**kwargs: object) -> list[CheckMessage]:
    """A venue installation tells the gaming authority of every self-exclusion (the outbox's authority
    destination, sent by `run_link`): without HALL_AUTHORITY_URL they wait in the outbox, the document
    with them."""
    if settings.HALL_ROLE != "venue" or settings.HALL_EMBEDDED or settings.HALL_AUTHORITY_URL:
        return []
    return [
        Warning(
            "HALL_AUTHORITY_URL is not set: self-exclusions wait in the outbox, not sent to the authority.",
            hint="Set HALL_AUTHORITY_URL (and HALL_AUTHORITY_TOKEN) and run `manage.py run_link`.",
            id="door.W001",
        )
    ]
