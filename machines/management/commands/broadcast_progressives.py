"""``manage.py broadcast_progressives``: the machines' progressive broadcaster, a process of its own.

Every HALL_MACHINE_BROADCAST_SECONDS it sends every link group's levels to its machines (machines.
broadcaster). One per installation (two are harmless: the machines hear both); it needs the database and
the channel layer (Redis) of the web processes. SIGTERM or SIGINT stop it.
"""

from __future__ import annotations

import asyncio
import signal
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand
from django.utils.translation import gettext as _

from machines.broadcaster import Broadcaster


class Command(BaseCommand):
    help = "Send the link groups' progressive levels to their machines, every HALL_MACHINE_BROADCAST_SECONDS."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--interval", type=float, help="seconds between broadcasts (default: settings)")

    def handle(self, *args: Any, **options: Any) -> None:
        broadcaster = Broadcaster()
        if options["interval"]:
            broadcaster.interval = options["interval"]

        async def main() -> None:
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, stop.set)
            await broadcaster.serve(stop)

        self.stdout.write(
            _("Broadcasting the progressive levels every %(interval)s s.")
            % {"interval": broadcaster.interval}
        )
        asyncio.run(main())
        self.stdout.write(_("Broadcaster stopped after %(ticks)s rounds.") % {"ticks": broadcaster.ticks})
