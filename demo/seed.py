"""``seed_demo``: the demo hall and every app's part of it; ``start_runners``: what runs beside its server."""

from __future__ import annotations

from collections.abc import Callable

from demo import door, electronic, machines, tables, tax
from demo import hall as demo_hall
from demo.hall import AUTOPLAY_ROOM, DemoHall

__all__ = ["AUTOPLAY_ROOM", "DemoHall", "seed_demo", "start_runners"]

# Each runner is started with the hall and the server's base URL ("http://127.0.0.1:8000") before the server
# starts; it must not block (a daemon thread waits for the server to listen) and returns its stop.
Runner = Callable[[DemoHall, str], Callable[[], None]]
RUNNERS: tuple[Runner, ...] = (
    machines.run_broadcaster,
    machines.run_demo_machines,
    electronic.run_demo_terminals,
)


def seed_demo() -> DemoHall:
    """Create what is missing of the demo hall, reset the staff passwords, then the tables', bingo's, the
    machines' and electronic bingo's parts (in the order the pools were always made)."""
    hall = demo_hall.seed_hall()
    for seed in (
        tables.seed_tables,
        demo_hall.seed_bingo,
        machines.seed_machines,
        electronic.seed_electronic,
        door.seed_door,
        tax.seed_tax,
    ):
        seed(hall)
    # The electronic rooms (seeded last) get their audio screen too: each room's first screen says the balls.
    demo_hall.choose_audio_screens(hall)
    return hall


def start_runners(hall: DemoHall, base_url: str) -> Callable[[], None]:
    """Start the runners; returns one function that stops them all (in reverse order)."""
    stops = [runner(hall, base_url) for runner in RUNNERS]

    def stop_all() -> None:
        for stop in reversed(stops):
            stop()

    return stop_all
