"""The demo's settings, read by config/settings.py outside production (no Django imports here)."""

from __future__ import annotations

from typing import Any

import environ

env = environ.Env()

BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    # The self-playing rooms (demo.autoplay): one step each.
    "demo-autoplay": {
        "task": "demo.tasks.autoplay_rooms",
        "schedule": env.float("HALL_AUTOPLAY_SECONDS", default=3.0),
    },
    # The simulated terminals' players through the door again once the venue's day changed (their cards are
    # played only by a player admitted today: HALL_DOOR_CARDS_NEED_ADMISSION).
    "demo-door": {
        "task": "demo.tasks.admit_demo_players",
        "schedule": env.float("HALL_DEMO_DOOR_SECONDS", default=300.0),
        "options": {"expires": 300.0},
    },
    # The self-playing casino tables (a no-op unless TABLE_AUTOPLAY, below).
    "demo-table-autoplay": {
        "task": "demo.tasks.autoplay_tables",
        "schedule": env.float("HALL_TABLE_AUTOPLAY_SECONDS", default=2.0),
        "options": {"expires": 2.0},
    },
}
# The casino tables play hands by themselves (demo.tables); `manage.py demo` turns it on.
TABLE_AUTOPLAY = env.bool("HALL_DEMO_TABLE_AUTOPLAY", default=False)
# This installation is a node of the network demo (`manage.py demo_network` sets it for its processes), and
# how long each of its simultaneous games is on sale.
NETWORK = env.bool("HALL_DEMO_NETWORK", default=False)
NETWORK_SALES_SECONDS = env.float("HALL_DEMO_NETWORK_SALES_SECONDS", default=20.0)
if NETWORK:
    # One step of the network demo's central or venue (demo.network).
    BEAT_SCHEDULE["demo-network"] = {
        "task": "demo.tasks.autoplay_network",
        "schedule": env.float("HALL_DEMO_NETWORK_TICK_SECONDS", default=1.0),
        "options": {"expires": 2.0},
    }
