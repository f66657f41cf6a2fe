"""``manage.py simulate_program``: what a prize program would do, before switching it on (issue 4).

Either a program type and its parameters (exactly what `rules.make_program` takes), which touches no
database::

    manage.py simulate_program --type BA-3 --params '{"funding_percent": "1.5", "authorisation_ref": "X"}' \\
        --games-per-day 30 --cards 120 --cards-spread 40 --price 1.00 --days 365 --seed 1 --svg out.svg

or a configured program (``--program <id>``): the version in force now, the hall category and time zone of
its venue (unless given) and, for BA-19/BA-20, the room's Bolsa percentage (unless given). Prints the
readable report (or ``--json``); ``--svg`` writes the plot. The simulation is
`bingo.traditional.programs.simulate`:
it starts as at activation (an empty pool, the initial state), whatever the configured pool holds now, and
writes nothing.
"""

from __future__ import annotations

import json
import time as timer
from argparse import ArgumentParser, ArgumentTypeError
from datetime import date, datetime, time
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _

from bingo.traditional.programs.plot import render_svg
from bingo.traditional.programs.regulation import HallCategory, ProgramType
from bingo.traditional.programs.rules import Funding, Program, ProgramError, make_program
from bingo.traditional.programs.simulate import PickPolicy, PickWhen, SalesProfile, SimulationError, simulate

DEFAULT_PROFILE = SalesProfile()


def _decimal(text: str) -> Decimal:
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise ArgumentTypeError(f"{text!r} is not a decimal number") from None
    if not value.is_finite():
        raise ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def _hour(text: str) -> time:
    try:
        return time.fromisoformat(text.strip())
    except ValueError:
        raise ArgumentTypeError(f"{text!r} is not a time of day HH:MM") from None


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise ArgumentTypeError(f"{text!r} is not a date YYYY-MM-DD") from None


class Command(BaseCommand):
    help = (
        "Simulate a prize program (BA-1 … BA-20) over many days with the real prize logic: hit frequency, "
        "prizes, days to trigger, share of sales returned, and a plot (--svg)."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        what = parser.add_mutually_exclusive_group(required=True)
        what.add_argument("--type", dest="program_type", choices=[t.value for t in ProgramType])
        what.add_argument("--program", type=int, help="a configured program's id: its version in force now")
        parser.add_argument("--params", default="{}", help="JSON parameters for --type (make_program's)")
        parser.add_argument("--games-per-day", type=int, default=DEFAULT_PROFILE.games_per_day)
        parser.add_argument("--cards", type=int, default=DEFAULT_PROFILE.cards_per_game)
        parser.add_argument("--cards-spread", type=int, default=DEFAULT_PROFILE.cards_spread)
        parser.add_argument("--price", type=_decimal, default=DEFAULT_PROFILE.card_price)
        parser.add_argument("--first-game", type=_hour, default=DEFAULT_PROFILE.first_game)
        parser.add_argument("--minutes-per-game", type=int, default=DEFAULT_PROFILE.minutes_per_game)
        sessions = parser.add_mutually_exclusive_group()
        sessions.add_argument("--sessions-per-day", type=int)
        sessions.add_argument("--games-per-session", type=int)
        parser.add_argument("--session-break", type=int, default=0, help="minutes between sessions")
        parser.add_argument("--category", choices=["1", "2", "3"], help="hall category (default 1)")
        parser.add_argument("--time-zone", help=f"IANA zone (default {DEFAULT_PROFILE.time_zone})")
        parser.add_argument("--start-date", type=_date, default=DEFAULT_PROFILE.start_date)
        parser.add_argument("--days", type=int, default=365)
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--bolsa-percent", type=_decimal, help="BA-19/BA-20: the Bolsa's funding %%")
        parser.add_argument("--pick-when", choices=[w.value for w in PickWhen], default=PickWhen.FUNDED.value)
        parser.add_argument("--pick-amount", type=_decimal, help="BA-19/BA-20: the announced amount")
        parser.add_argument("--pick-order", type=int, help="BA-2 trigger order / BA-19 extraction order")
        parser.add_argument("--pick-colour", help="BA-20: the announced colour (default: drawn each time)")
        parser.add_argument("--svg", type=Path, help="write the plot to this SVG file")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        category: str | None = options["category"]
        time_zone: str | None = options["time_zone"]
        bolsa: Decimal | None = options["bolsa_percent"]
        if options["program_type"]:
            zone_name = time_zone or DEFAULT_PROFILE.time_zone
            program = self._from_params(options["program_type"], options["params"], options, zone_name)
        else:
            program, venue_category, venue_zone, room_bolsa = self._configured(options["program"])
            category, time_zone = category or venue_category, time_zone or venue_zone
            if bolsa is None and program.info.funding is Funding.BOLSA_ACUMULADA:
                bolsa = room_bolsa
        try:
            profile = SalesProfile(
                games_per_day=options["games_per_day"],
                cards_per_game=options["cards"],
                cards_spread=options["cards_spread"],
                card_price=options["price"],
                first_game=options["first_game"],
                minutes_per_game=options["minutes_per_game"],
                sessions_per_day=options["sessions_per_day"],
                games_per_session=options["games_per_session"],
                session_break_minutes=options["session_break"],
                hall_category=HallCategory(category) if category else DEFAULT_PROFILE.hall_category,
                time_zone=time_zone or DEFAULT_PROFILE.time_zone,
                start_date=options["start_date"],
            )
            policy = PickPolicy(
                when=PickWhen(options["pick_when"]),
                amount=options["pick_amount"],
                max_ball=options["pick_order"],
                colour=options["pick_colour"],
            )
            began = timer.perf_counter()
            report = simulate(
                program,
                profile,
                days=options["days"],
                seed=options["seed"],
                bolsa_percent=bolsa,
                pick_policy=policy,
            )
            elapsed = timer.perf_counter() - began
        except (SimulationError, ProgramError) as exc:
            raise CommandError("cannot simulate: " + "; ".join(exc.problems)) from exc

        svg_path: Path | None = options["svg"]
        if svg_path is not None:
            svg_path.write_text(render_svg(report), encoding="utf-8")
        if options["json"]:
            data = report.to_dict()
            data["elapsed_seconds"] = round(elapsed, 3)
            if svg_path is not None:
                data["svg"] = str(svg_path)
            self.stdout.write(json.dumps(data, indent=2, ensure_ascii=False))
            return
        self.stdout.write(report.text())
        self.stdout.write(_("Simulated in %(elapsed)s s") % {"elapsed": format(elapsed, ".2f")})
        if svg_path is not None:
            self.stdout.write(_("Plot written to %(svg_path)s") % {"svg_path": svg_path})

    def _from_params(self, program_type: str, raw: str, options: dict[str, Any], zone_name: str) -> Program:
        try:
            # Decimals stay exact: make_program refuses floats for amounts and percentages.
            params = json.loads(raw, parse_float=Decimal)
        except json.JSONDecodeError as exc:
            raise CommandError(_("--params is not JSON: %(exc)s") % {"exc": exc}) from exc
        if not isinstance(params, dict):
            raise CommandError(_("--params must be a JSON object of the program's parameters"))
        try:
            tz = ZoneInfo(zone_name)
        except (ValueError, KeyError) as exc:
            raise CommandError(_("unknown time zone %(zone_name)r") % {"zone_name": zone_name}) from exc
        start: date = options["start_date"]
        try:
            return make_program(
                program_type,
                params,
                program_id="simulation",
                effective_from=datetime.combine(start, time(0), tzinfo=tz),
            )
        except ProgramError as exc:
            raise CommandError("bad program: " + "; ".join(exc.problems)) from exc

    def _configured(self, program_id: int) -> tuple[Program, str, str, Decimal | None]:
        """A configured program's version in force, its venue's category and zone, and its room's Bolsa %."""
        # Imported here: the --type path needs no models (and no database).
        from django.core.exceptions import ObjectDoesNotExist

        from bingo.traditional.models import PrizeProgram
        from bingo.traditional.services.programs import current_version
        from halls.errors import DomainError

        try:
            configured = PrizeProgram.objects.select_related("room__venue").get(pk=program_id)
        except PrizeProgram.DoesNotExist:
            raise CommandError(
                _("no prize program with id %(program_id)s") % {"program_id": program_id}
            ) from None
        try:
            program = current_version(configured)
        except ProgramError as exc:
            raise CommandError("; ".join(exc.problems)) from exc
        except DomainError as exc:  # e.g. no version in force yet
            raise CommandError(str(exc)) from exc
        venue = configured.room.venue
        try:
            bolsa: Decimal | None = configured.room.bolsa.funding_percent
        except ObjectDoesNotExist:
            bolsa = None
        return program, venue.hall_category, venue.time_zone, bolsa
