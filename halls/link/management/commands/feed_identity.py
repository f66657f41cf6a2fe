"""Print this installation's feed identity: its id and its public key (the anchors' Ed25519 key), as JSON,
for its regulator's node to register (`manage.py regulator_register` there)."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from halls.services import anchor_key


class Command(BaseCommand):
    help = "Print this installation's id and public key (JSON), for its regulator's node to register."

    def handle(self, *args: Any, **options: Any) -> None:
        document = anchor_key.document()
        document["role"] = settings.HALL_ROLE
        self.stdout.write(json.dumps(document, sort_keys=True))
