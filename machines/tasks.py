"""Celery doors of the machine link: the progressive broadcast and the silent-machine watch."""

from __future__ import annotations

from celery import shared_task


@shared_task(ignore_result=True)
def broadcast_progressives() -> int:
    return 0


@shared_task(ignore_result=True)
def watch_machine_links() -> int:
    return 0
