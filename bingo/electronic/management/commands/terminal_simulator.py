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

import json
import signal
import sys
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _

from bingo.electronic import simulator


def write_tokens(path: Path, profiles: list[simulator.TerminalProfile]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for p in profiles:
            row = {
                "device": p.device_id,
                "token": p.token,
                "card": p.card_number,
                "software_version": p.software_version,
            }
            out.write(json.dumps(row) + "\n")
    path.chmod(0o600)  # device tokens


def read_tokens(path: Path) -> list[simulator.TerminalProfile]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
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


def _shard(value: str) -> tuple[int, int]:
    try:
        i, n = (int(x) for x in value.split("/"))
    except ValueError:
        raise CommandError(_("--shard is I/N (e.g. 0/2), not %(value)r") % {"value": value}) from None
    if n < 1 or not 0 <= i < n:
        raise CommandError(_("--shard %(value)s: need 0 <= I < N") % {"value": value})
    return i, n


class Command(BaseCommand):
    help = "Run N simulated player terminals of electronic bingo against a running hall and print statistics."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--terminals", type=int, default=None, help="how many (--register: 10)")
        parser.add_argument(
            "--url",
            default="http://127.0.0.1:8000",
            help="the server, http://host:port; several comma-separated spread the terminals over them",
        )
        parser.add_argument("--seed", type=int, default=0, help="terminal i chooses with Random(seed + i)")
        parser.add_argument("--duration", type=float, default=None, help="seconds (default: until Ctrl-C)")
        parser.add_argument("--buy-probability", type=float, default=0.9, help="per game")
        parser.add_argument("--sizes", default="1,2,3,4,6", help="cards per purchase to choose from")
        parser.add_argument("--buy-spread", type=float, default=10.0, help="seconds of the window to buy in")
        parser.add_argument(
            "--purchase-door",
            choices=("socket", "http"),
            default="socket",
            help="purchases over the terminal's socket (as the page, HTTP while it is closed) or HTTP",
        )
        parser.add_argument("--warmup", type=float, default=0.0, help="seconds not measured after connecting")
        parser.add_argument("--connect-rate", type=float, default=200.0, help="new connections per second")
        parser.add_argument("--settle", type=float, default=3.0, help="seconds before reading final balances")
        parser.add_argument("--no-balances", action="store_true", help="skip the final balance check")
        parser.add_argument("--report", type=Path, help="also write the statistics as JSON to this file")
        parser.add_argument("--errors", type=int, default=5, help="connection errors to print (then count)")
        source = parser.add_argument_group("terminals")
        source.add_argument("--tokens", type=Path, help="JSON lines of terminals and tokens (no database)")
        source.add_argument(
            "--shard", default="0/1", help="I/N: every N-th terminal of --tokens from the I-th"
        )
        source.add_argument("--register", action="store_true", help="register terminals, new tokens")
        source.add_argument("--speciality", help="speciality code (--register)")
        source.add_argument("--venue", type=int, help="venue id, when the code is not unique (--register)")
        source.add_argument("--prefix", default="SIM-T", help="terminal name prefix (--register)")
        source.add_argument("--tokens-out", type=Path, help="write the new tokens here (--register)")

    def handle(self, *args: Any, **options: Any) -> None:
        profiles = self._profiles(options)
        if not profiles:
            raise CommandError(_("No terminals to simulate."))
        urls = [u.strip() for u in str(options["url"]).split(",") if u.strip()]
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
        shown = {"n": 0}

        def on_error(text: str) -> None:
            shown["n"] += 1
            if shown["n"] <= options["errors"]:
                self.stderr.write(text)

        self.stdout.write(
            f"{len(profiles)} terminals → {', '.join(urls)}, seed {config.seed}"
            + (f", {options['duration']:g} s" if options["duration"] else ", until Ctrl-C")
        )

        async def main() -> simulator.Report:
            import asyncio

            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop.set)
            return await simulator.run_simulation(
                profiles,
                urls,
                config,
                duration=options["duration"],
                stop=stop,
                warmup=options["warmup"],
                connect_rate=options["connect_rate"],
                settle_seconds=options["settle"],
                check_balances=not options["no_balances"],
                on_error=on_error,
            )

        report: simulator.Report = simulator.run(main)
        for line in report.lines():
            self.stdout.write(line)
        if shown["n"] > options["errors"]:
            self.stderr.write(_("(%(count)s connection errors in all)") % {"count": shown["n"]})
        if options["report"]:
            options["report"].write_text(json.dumps(report.to_json()), encoding="utf-8")

    def _profiles(self, options: dict[str, Any]) -> list[simulator.TerminalProfile]:
        if options["tokens"] and options["register"]:
            raise CommandError(_("Give --tokens or --register, not both."))
        if options["tokens"]:
            i, n = _shard(options["shard"])
            profiles = read_tokens(options["tokens"])[i::n]
            if options["terminals"] and options["terminals"] < len(profiles):
                profiles = profiles[: options["terminals"]]
            return profiles
        if not options["register"]:
            raise CommandError(
                _("Say where the terminals come from: --register --speciality CODE, or --tokens FILE.")
            )
        return self._register(options)

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
