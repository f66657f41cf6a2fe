"""``manage.py simulate_machines``: N simulated type B/C machines playing against the gateway over WebSocket.

Where the machines come from, one of:

- ``--register --venue ID [--link-group CODE]``: machines ``<prefix>0001``… of the venue, registered when
  missing and linked to the group (created with a new three-level pool when missing), with NEW device
  tokens (the old ones stop working); ``--tokens-out FILE`` keeps them (JSON lines) for later runs.
- ``--tokens FILE``: the JSON lines a ``--register`` run wrote (``--shard I/N`` takes every N-th machine
  from the I-th, so several processes can share one file). No database access at all. Seqs resume from
  the system (the welcome's last_seq), meters from the file: a file reused after machines played makes
  their next snapshot look like a meter jump (a meter_mismatch alert); ``--register`` again resumes both.

    manage.py simulate_machines --register --venue 1 --link-group SALA --machines 50 \\
        --url ws://127.0.0.1:8000 --duration 60
    manage.py simulate_machines --tokens var/machines.jsonl --url ws://127.0.0.1:8000 --duration 60

The statistics (plays sent/accepted/duplicate/rejected, reply latency, broadcast intervals, lock-ups) are
printed at the end; ``--report FILE`` also writes them as JSON (bench/machines.py merges those).
"""

from __future__ import annotations

import sys
from argparse import ArgumentParser
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _

from halls import simulation
from machines import simulator


def _write_tokens(path: Path, credentials: list[simulator.Credentials]) -> None:
    rows = [
        {
            "asset": cred.profile.asset,
            "token": cred.token,
            "venue": cred.venue_id,
            "type": cred.profile.machine_type,
            "denomination": str(cred.profile.denomination),
            "software_version": cred.profile.software_version,
            "next_seq": cred.profile.next_seq,
            "meters": {
                "coin_in": str(cred.profile.meters.coin_in),
                "coin_out": str(cred.profile.meters.coin_out),
                "jackpots_paid": str(cred.profile.meters.jackpots_paid),
                "credits": str(cred.profile.meters.credits),
                "games_played": cred.profile.meters.games_played,
            },
        }
        for cred in credentials
    ]
    simulation.write_json_lines(path, rows)


def read_tokens(path: Path) -> list[simulator.Credentials]:
    credentials = []
    for index, row in enumerate(simulation.read_json_lines(path)):
        meters = row.get("meters") or {}
        profile = simulator.MachineProfile(
            index=index,
            asset=row["asset"],
            machine_type=row.get("type", "C"),
            denomination=Decimal(row.get("denomination", "0.20")),
            software_version=row.get("software_version", "SIM-1.0"),
            next_seq=int(row.get("next_seq", 1)),
            meters=simulator.Meters(
                coin_in=Decimal(meters.get("coin_in", "0.00")),
                coin_out=Decimal(meters.get("coin_out", "0.00")),
                jackpots_paid=Decimal(meters.get("jackpots_paid", "0.00")),
                credits=Decimal(meters.get("credits", "0.00")),
                games_played=int(meters.get("games_played", 0)),
            ),
        )
        credentials.append(
            simulator.Credentials(profile=profile, token=row["token"], venue_id=row.get("venue"))
        )
    return credentials


class Command(BaseCommand):
    help = "Run N simulated type B/C machines against the machine gateway (WebSocket) and print statistics."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--machines", type=int, default=None, help="how many (--register: default 10; --tokens: all)"
        )
        source = simulation.add_run_arguments(
            parser, devices="machines", scheme="ws", seed_help="machine i plays Random(seed + i)"
        )
        parser.add_argument("--pace-scale", type=float, default=1.0, help="× the type's minimum game time")
        parser.add_argument("--think", type=float, default=0.25, help="extra time per game, fraction (0-1)")
        parser.add_argument("--hit-probability", type=float, default=1 / 20_000, help="per game")
        parser.add_argument("--meters-every", type=int, default=50, help="plays between meter snapshots")
        parser.add_argument(
            "--heartbeat-every", type=float, default=3.0, help="seconds of silence before a heartbeat"
        )
        parser.add_argument(
            "--drain", type=float, default=10.0, help="seconds to wait for replies at the end"
        )
        source.add_argument("--register", action="store_true", help="register/link machines, new tokens")
        source.add_argument("--venue", type=int, help="venue id (--register)")
        source.add_argument("--link-group", default="SIM-PROGRESIVO", help="link group code (--register)")
        source.add_argument("--prefix", default="SIM-", help="asset number prefix (--register)")
        source.add_argument("--type", choices=("B", "C"), default="C", dest="machine_type")
        source.add_argument("--denomination", default="0.20")

    def handle(self, *args: Any, **options: Any) -> None:
        credentials = self._credentials(options)
        if not credentials:
            raise CommandError(_("No machines to simulate."))
        urls = simulation.bases(str(options["url"]))
        config = simulator.SimConfig(
            seed=options["seed"],
            pace_scale=options["pace_scale"],
            think=options["think"],
            hit_probability=options["hit_probability"],
            meters_every=options["meters_every"],
            heartbeat_every=options["heartbeat_every"],
        )
        errors = simulation.ErrorLog(options["errors"], self.stderr.write)
        pace = f", pace × {config.pace_scale}"
        self.stdout.write(
            simulation.heading(len(credentials), "machines", urls, config.seed, options["duration"], pace)
        )

        report = simulation.run_until_stopped(
            lambda stop: simulator.run_simulation(
                credentials,
                urls,
                config,
                duration=options["duration"],
                stop=stop,
                warmup=options["warmup"],
                connect_rate=options["connect_rate"],
                drain_seconds=options["drain"],
                on_error=errors,
            )
        )
        simulation.tell(report, errors=errors, write=self.stdout.write, path=options["report"], gettext=_)

    def _credentials(self, options: dict[str, Any]) -> list[simulator.Credentials]:
        try:
            return simulation.devices_from(
                options,
                count="machines",
                read=read_tokens,
                register=lambda: self._register(options),
                nowhere=_("Say where the machines come from: --register --venue ID, or --tokens FILE."),
                gettext=_,
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None

    def _register(self, options: dict[str, Any]) -> list[simulator.Credentials]:
        from django.db import connection

        from halls.models import Venue
        from machines import provisioning

        if options["venue"] is None:
            raise CommandError(_("--register needs --venue ID."))

        venue = Venue.objects.filter(pk=options["venue"]).first()
        if venue is None:
            raise CommandError(_("No venue %(venue)s.") % {"venue": options["venue"]})
        code = options["link_group"]
        count = options["machines"] or 10
        actor = "simulator"
        group = provisioning.ensure_link_group(
            venue=venue, code=code, name=f"Simulador {code}", pool_code=f"{code}-POOL", actor=actor
        )
        assets = [f"{options['prefix']}{i:04d}" for i in range(1, count + 1)]
        spec = provisioning.MachineSpec(
            machine_type=options["machine_type"], denomination=Decimal(options["denomination"])
        )
        machines = provisioning.ensure_machines(
            venue=venue, group=group, assets=assets, spec=spec, actor=actor
        )
        credentials = provisioning.issue_credentials(machines, actor=actor)
        if options["tokens_out"]:
            _write_tokens(options["tokens_out"], credentials)
            self.stdout.write(
                _("tokens of %(count)s machines written to %(path)s")
                % {"count": len(credentials), "path": options["tokens_out"]}
            )
        sys.stdout.flush()
        connection.close()  # the simulator's loop runs in this thread and needs no database
        return credentials
