"""This installation's identity: a random id kept in its own database, so what this installation publishes
outside it (the audit anchors: halls.services.anchors) is named by it and never read as another's. Two
databases beside one checkout (a demo and a test run, two demos) share the default anchor folder and the
per-install key file; with their own ids neither reads the other's anchors as its own.

Made the first time it is asked for, not at migrate: a migrated database copied as a template (the demos
do) gets an id of its own at its first anchor. Then it never changes: the row is append-only (triggers on
PostgreSQL and SQLite, ``verify_audit`` reports one switched off), and it follows the data through a backup
and restore, so a restored installation keeps reaching its anchors.
"""

from __future__ import annotations

import secrets

from django.db import IntegrityError, transaction
from django.utils import timezone

from halls.models import Installation

SINGLETON = 1


def identity() -> str:
    """The installation's id (16 hex digits), made once."""
    found = Installation.objects.filter(pk=SINGLETON).values_list("uid", flat=True).first()
    if found is not None:
        return found
    try:
        with transaction.atomic():
            Installation.objects.create(pk=SINGLETON, uid=secrets.token_hex(8), created_at=timezone.now())
    except IntegrityError:
        pass  # another process made it a moment ago: that one is the id
    uid: str = Installation.objects.values_list("uid", flat=True).get(pk=SINGLETON)
    return uid
