"""Publish every audit and seal chain head that moved, signed, outside the database (as the beat does)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from django.utils.translation import gettext as _

from halls.services import anchors


class Command(BaseCommand):
    help = "Append a signed anchor for every chain head that moved (HALL_AUDIT_ANCHOR_DIR/<installation>)."

    def handle(self, *args: Any, **options: Any) -> None:
        written = anchors.write()
        self.stdout.write(
            _("%(count)s anchors written to %(folder)s") % {"count": len(written), "folder": anchors.folder()}
        )
