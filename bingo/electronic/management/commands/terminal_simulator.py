"""``manage.py terminal_simulator``: N simulated player terminals buying and playing electronic bingo against
a running hall (its device API and terminal socket; bingo.electronic.simulator).

Where the terminals come from, one of:

- ``--register --speciality CODE``: terminals ``<prefix>0001``… of the speciality, registered when missing,
  each with a player card loaded to 500 € by the simulator's own cashier, and NEW device tokens (the old ones
  stop working); ``--tokens-out FILE`` keeps them (JSON lines) for later runs. A terminal registered now plays
  once a verification has passed it: run one (and open the session) after this has said hello.
- ``--tokens FILE``: the JSON lines a ``--register`` run wrote (``--shard I/N``: every N-th terminal from the
  I-th, so several processes can share one file). No database access at all.

    manage.py terminal_simulator --register --speciality E90 --terminals 50 --url http://127.0.0.1:8000 \\
        --duration 300
    manage.py terminal_simulator --tokens var/terminals.jsonl --url http://127.0.0.1:8000 --duration 300

The statistics (purchases answered with p50/p99, balls received with their delay, messages lost and
recovered by a snapshot, prizes seen against the card balances) are printed at the end; ``--report FILE``
also writes them as JSON (bench/terminal_simulator.py merges those).
"""

from __future__ import annotations

import sys
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _

from bingo.electronic import simulator
from halls import simulation


def write_tokens(path: Path, profiles: list[simulator.TerminalProfile]) -> None:
    rows = [
        {
            "device": p.device_id,
            "token": p.token,
            "card": p.card_number,
            "software_version": p.software_version,
        }
        for p in profiles
    ]
    simulation.write_json_lines(path, rows)


def read_tokens(path: Path) -> list[simulator.TerminalProfile]:
    rows = simulation.read_json_lines(path)
    return [
        simulator.TerminalProfile(
            index=index,
            device_id=int(row["device"]),
            token=str(row["token"]),
            card_number=str(row["card"]),
            software_version=str(row.get("software_version") or simulator.SOFTWARE_VERSION),
        )
        for index, row in enumerate(rows)
    ]


class Command(BaseCommand):
    help = "Run N simulated player terminals of electronic bingo against a running hall and print statistics."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--terminals", type=int, default=None, help="how many (--register: 10)")
        source = simulation.add_run_arguments(
            parser, devices="terminals", scheme="http", seed_help="terminal i chooses with Random(seed + i)"
        )
        parser.add_argument("--buy-probability", type=float, default=0.9, help="per game")
        parser.add_argument("--sizes", default="1,2,3,4,6", help="cards per purchase to choose from")
        parser.add_argument("--buy-spread", type=float, default=10.0, help="seconds of the window to buy in")
        parser.add_argument(
            "--purchase-door",
            choices=("socket", "http"),
            default="socket",
            help="purchases over the terminal's socket (as the page, HTTP while it is closed) or HTTP",
        )
        parser.add_argument("--settle", type=float, default=3.0, help="seconds before reading final balances")
        parser.add_argument("--no-balances", action="store_true", help="skip the final balance check")
        source.add_argument("--register", action="store_true", help="register terminals, new tokens")
        source.add_argument("--speciality", help="speciality code (--register)")
        source.add_argument("--venue", type=int, help="venue id, when the code is not unique (--register)")
        source.add_argument("--prefix", default="SIM-T", help="terminal name prefix (--register)")

    def handle(self, *args: Any, **options: Any) -> None:
        profiles = self._profiles(options)
        if not profiles:
            raise CommandError(_("No terminals to simulate."))
        urls = simulation.bases(str(options["url"]))
        try:
            sizes = tuple(int(s) for s in str(options["sizes"]).split(",") if s.strip())
        except ValueError:
            raise CommandError(_("--sizes is a comma-separated list of card counts.")) from None
        config = simulator.SimConfig(
            seed=options["seed"],
            sizes=sizes,
            buy_probability=options["buy_probability"],
            buy_spread=options["buy_spread"],
            purchase_door=options["purchase_door"],
        )
        errors = simulation.ErrorLog(options["errors"], self.stderr.write)
        self.stdout.write(
            simulation.heading(len(profiles), "terminals", urls, config.seed, options["duration"])
        )

        report = simulation.run_until_stopped(
            lambda stop: simulator.run_simulation(
                profiles,
                urls,
                config,
                duration=options["duration"],
                stop=stop,
                warmup=options["warmup"],
                connect_rate=options["connect_rate"],
                settle_seconds=options["settle"],
                check_balances=not options["no_balances"],
                on_error=errors,
            )
        )
        simulation.tell(report, errors=errors, write=self.stdout.write, path=options["report"], gettext=_)

    def _profiles(self, options: dict[str, Any]) -> list[simulator.TerminalProfile]:
        try:
            return simulation.devices_from(
                options,
                count="terminals",
                read=read_tokens,
                register=lambda: self._register(options),
                nowhere=_(
                    "Say where the terminals come from: --register --speciality CODE, or --tokens FILE."
                ),
                gettext=_,
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None

    def _register(self, options: dict[str, Any]) -> list[simulator.TerminalProfile]:
        from django.db import connection

        from bingo.electronic import provisioning
        from bingo.electronic.models import Speciality

        found = Speciality.objects.filter(code=options["speciality"] or "")
        if options["venue"] is not None:
            found = found.filter(venue_id=options["venue"])
        specialities = list(found.select_related("venue"))
        if len(specialities) != 1:
            raise CommandError(
                _("--register needs --speciality CODE of one speciality (and --venue ID if several).")
            )
        speciality = specialities[0]
        count = options["terminals"] or 10
        names = [f"{options['prefix']}{i:04d}" for i in range(1, count + 1)]
        actor = "simulator"
        terminals = provisioning.ensure_terminals(speciality=speciality, names=names, actor=actor)
        cashier = provisioning.robot_cashier(speciality.venue)
        numbers = provisioning.cards_in_use(terminals)
        cards_of = provisioning.ensure_cards(terminals=terminals, numbers=numbers, cashier=cashier)
        profiles = provisioning.issue_credentials(terminals=terminals, cards_of=cards_of, actor=actor)
        if options["tokens_out"]:
            write_tokens(options["tokens_out"], profiles)
            self.stdout.write(
                _("tokens of %(count)s terminals written to %(path)s")
                % {"count": len(profiles), "path": options["tokens_out"]}
            )
        sys.stdout.flush()
        connection.close()  # the simulator's loop runs in this thread and needs no database
        return profiles
