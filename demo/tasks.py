"""The demo's beat tasks (demo.conf.BEAT_SCHEDULE): one step of every self-playing room and table; the
simulated players back through the door each day."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

from demo import autoplay, electronic, network, tables
from demo.actors import autoplay_actor
from halls.errors import DomainError

log = logging.getLogger("hall.demo")


@shared_task(ignore_result=True)
def autoplay_rooms() -> list[str]:
    return [autoplay.tick(room) for room in autoplay.playing_rooms()]


@shared_task(ignore_result=True)
def autoplay_tables() -> list[str]:
    """One hand at every demo table; a no-op unless `manage.py demo` turned HALL_DEMO_TABLE_AUTOPLAY on."""
    if not getattr(settings, "HALL_DEMO_TABLE_AUTOPLAY", False):
        return []
    actor = autoplay_actor()
    done = []
    for table in tables.playing_tables():
        try:
            done.append(tables.play_hand(table, actor))
        except DomainError as exc:  # e.g. a croupier opened a hand by hand meanwhile: next tick
            log.info("autoplay skipped %s: %s", table, exc)
        except Exception:  # one table's failure must not stop the others
            log.exception("autoplay failed at %s", table)
    return done


@shared_task(ignore_result=True)
def autoplay_network() -> list[str]:
    """One step of this installation's part of the network demo (demo.network); a no-op elsewhere."""
    try:
        return network.tick()
    except DomainError as exc:  # e.g. a step the product refused now: the next tick starts from the state
        log.info("network autoplay skipped: %s", exc)
        return []


@shared_task(ignore_result=True)
def admit_demo_players() -> int:
    """The simulated terminals' players admitted at the door again after the venue's midnight
    (demo.electronic)."""
    return electronic.admit_demo_players()
