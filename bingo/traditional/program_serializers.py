"""Shapes of the prize-program part of the REST API (bolsa acumulada, spec §2.4).

Requests carry a program's parameters as a JSON object: exactly what
`bingo.traditional.programs.rules.make_program`
takes (amounts as decimal strings, e.g. "30.00"). Read models
(`bingo.traditional.services.programs.program_view` and
friends) are plain dicts; the output serializers below render them with money as strings.
"""

from __future__ import annotations

from datetime import time
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from bingo.traditional.programs.regulation import ProgramType
from halls import money
from halls.serializers import money_field

# --- parameters -----------------------------------------------------------------------------------------

PARAMS_SCHEMA = {
    "type": "object",
    "additionalProperties": True,
    "description": (
        "The program's parameters, as bingo.traditional.programs.rules.make_program takes them: "
        "funding_percent, amount, "
        "authorisation_ref, extraction_order, hours, colour... (GET /api/program-types/ lists those allowed "
        'per type). Amounts are decimal strings ("30.00"); a JSON number with a fraction is read as the '
        "decimal it prints as."
    ),
    "example": {"funding_percent": "2.5", "amount": "30.00", "authorisation_ref": "ML-DGJ-2025/017"},
}


def _plain(value: Any) -> Any:
    """A JSON value with every float turned into the decimal string it prints as (money is never float)."""
    if isinstance(value, float):
        return str(Decimal(repr(value)))
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


@extend_schema_field(PARAMS_SCHEMA)
class ParamsField(serializers.JSONField):
    """A program's parameters: a JSON object (validated by the program rules, not here)."""

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        if not isinstance(value, dict):
            raise serializers.ValidationError(_("Expected a JSON object of parameters."))
        return _plain(value)


def program_type_field(**kwargs: Any) -> serializers.ChoiceField:
    return serializers.ChoiceField(
        choices=[pt.value for pt in ProgramType],
        help_text="BA-1 … BA-20 (spec §2.4); GET /api/program-types/ describes each.",
        **kwargs,
    )


# --- requests -------------------------------------------------------------------------------------------


class ProgramActivateSerializer(serializers.Serializer[Any]):
    code = serializers.CharField(
        max_length=40,
        help_text="Short code of the program in its room: 1–24 letters, digits or - _ . / (e.g. prima-30).",
    )
    program_type = program_type_field()
    name = serializers.CharField(
        max_length=120, required=False, allow_blank=True, default="", help_text="Default: the type's name."
    )
    params = ParamsField()
    effective_from = serializers.DateTimeField(
        required=False, allow_null=True, default=None, help_text="When it takes effect; default: now."
    )


class ProgramVersionCreateSerializer(serializers.Serializer[Any]):
    params = ParamsField(help_text="The whole new parameter set (a version replaces, never patches).")
    effective_from = serializers.DateTimeField(
        required=False, allow_null=True, default=None, help_text="When it takes effect; default: now."
    )


class BolsaRequestSerializer(serializers.Serializer[Any]):
    funding_percent = serializers.DecimalField(
        max_digits=7,
        decimal_places=4,
        help_text="Percentage of each game's cards sold that goes to the room's Bolsa Acumulada (\"1.5\").",
    )
    authorisation_ref = serializers.CharField(max_length=120, help_text="The authorisation of the deduction.")


class PickRequestSerializer(serializers.Serializer[Any]):
    program = serializers.IntegerField(help_text="Id of a program of the game's room.")
    amount = money_field(
        money.PAYMENT_DIGITS,
        required=False,
        allow_null=True,
        default=None,
        help_text="Super Prima / Colour Prima amount.",
    )
    max_ball = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Bingo Extra / Super Prima extraction order.",
    )
    colour = serializers.CharField(
        max_length=20, required=False, allow_null=True, default=None, help_text="Colour Prima colour."
    )


# A simulation answers within a request: at most this many simulated games (about five seconds).
MAX_SIMULATED_GAMES = 50_000


class SalesProfileSerializer(serializers.Serializer[Any]):
    """A room's sales, as the simulator plays them (bingo.traditional.programs.simulate.SalesProfile)."""

    games_per_day = serializers.IntegerField(min_value=1, max_value=200)
    cards_per_game = serializers.IntegerField(
        min_value=1, max_value=10_000, help_text="Average cards sold per game."
    )
    spread = serializers.IntegerField(
        min_value=0,
        max_value=10_000,
        required=False,
        default=40,
        help_text="Cards sold vary uniformly in cards_per_game ± spread.",
    )
    price = money_field(
        money.PAYMENT_DIGITS,
        min_value=money.CENT,
        required=False,
        default=Decimal("1.00"),
        help_text="Card price.",
    )
    first_game = serializers.TimeField(
        required=False, default=time(16, 30), help_text="Local time of the day's first game."
    )
    minutes_per_game = serializers.IntegerField(min_value=1, max_value=240, required=False, default=8)
    start_date = serializers.DateField(
        required=False, allow_null=True, default=None, help_text="The first simulated day; default: today."
    )


class SimulationRequestSerializer(serializers.Serializer[Any]):
    program = serializers.IntegerField(
        required=False, allow_null=True, default=None, help_text="Simulate this program's version in force."
    )
    room = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Or: the room (its hall category and time zone) for a program_type with params.",
    )
    program_type = program_type_field(required=False, allow_null=True, default=None)
    params = ParamsField(required=False, allow_null=True, default=None)
    bolsa_percent = serializers.DecimalField(
        max_digits=7,
        decimal_places=4,
        required=False,
        allow_null=True,
        default=None,
        help_text="Super/Colour Prima: the Bolsa's funding percentage; default: the room's Bolsa's.",
    )
    profile = SalesProfileSerializer()
    days = serializers.IntegerField(min_value=1, max_value=3650, required=False, default=365)
    seed = serializers.IntegerField(
        min_value=0, required=False, default=0, help_text="Same seed, same simulated games."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        by_program = attrs["program"] is not None
        by_params = attrs["program_type"] is not None or attrs["params"] is not None
        if by_program == by_params:
            raise serializers.ValidationError(
                _("Give either program, or room with program_type and params (not both).")
            )
        if by_params and (attrs["room"] is None or attrs["program_type"] is None or attrs["params"] is None):
            raise serializers.ValidationError(_("room, program_type and params go together."))
        games = attrs["days"] * attrs["profile"]["games_per_day"]
        if games > MAX_SIMULATED_GAMES:
            raise serializers.ValidationError(
                _(
                    "%(games)s simulated games is too many for one "
                    "request (at most %(max_simulated_games)s): "
                    "fewer days or games per day, or run manage.py simulate_program."
                )
                % {"games": games, "max_simulated_games": MAX_SIMULATED_GAMES}
            )
        return attrs


# --- read models ----------------------------------------------------------------------------------------


class ProgramTypeSerializer(serializers.Serializer[Any]):
    type = serializers.CharField(help_text="BA-1 … BA-20.")
    name = serializers.CharField()
    family = serializers.CharField()
    trigger = serializers.CharField(help_text="What puts it in play: pool_reached, every_game, scheduled...")
    condition = serializers.CharField(help_text="What the Bingo must meet: bingo, max_ball or colour.")
    funding = serializers.CharField(help_text="sales_percent (its own pool) or bolsa_acumulada.")
    if_not_won = serializers.CharField(help_text="What happens to it after a game in play without award.")
    citation = serializers.CharField()
    params = serializers.ListField(child=serializers.CharField(), help_text="The parameters it takes.")


class ProgramWinnerSerializer(serializers.Serializer[Any]):
    series = serializers.CharField()
    serial = serializers.IntegerField()
    amount = money_field(money.PAYMENT_DIGITS)


class AnnouncedProgramSerializer(serializers.Serializer[Any]):
    """A program in play in a game, announced with the Line and Bingo prizes before the first ball."""

    code = serializers.CharField()
    type = serializers.CharField(help_text="BA-1 … BA-20.")
    name = serializers.CharField()
    amount = money_field(
        money.METER_DIGITS, allow_null=True, help_text="The prize announced (before sharing)."
    )
    max_ball = serializers.IntegerField(allow_null=True, help_text="The Bingo must come by this ball.")
    colour = serializers.CharField(allow_null=True, help_text="Colour Prima: the Bingo ball's colour.")
    row = serializers.IntegerField(allow_null=True, help_text="Scheduled Bingo Extra: the table's row.")
    slot = serializers.CharField(
        allow_null=True, help_text='Scheduled Bingo Extra: the hour served, "HH:MM".'
    )


class GameProgramSerializer(AnnouncedProgramSerializer):
    """A program in play in a game and, once the Bingo is confirmed, what it paid."""

    won = serializers.BooleanField(allow_null=True, help_text="null until the Bingo is confirmed.")
    prize = money_field(money.METER_DIGITS, allow_null=True)
    share = money_field(
        money.PAYMENT_DIGITS, allow_null=True, help_text="Each winning card's share, to the cent."
    )
    remainder = serializers.DecimalField(
        max_digits=24, decimal_places=10, allow_null=True, help_text="What the split left in the pool."
    )
    winners = ProgramWinnerSerializer(many=True)


class ProgramNextSerializer(serializers.Serializer[Any]):
    """What the program would announce if the next game started now (the close of sales decides)."""

    amount = money_field(money.PAYMENT_DIGITS, allow_null=True)
    max_ball = serializers.IntegerField(allow_null=True)
    colour = serializers.CharField(allow_null=True)
    slot = serializers.CharField(allow_null=True, help_text='The scheduled hour it serves, "HH:MM".')


class ProgramSerializer(serializers.Serializer[Any]):
    """A program of a room, as lists show it."""

    id = serializers.IntegerField()
    code = serializers.CharField()
    type = serializers.CharField(help_text="BA-1 … BA-20.")
    name = serializers.CharField()
    family = serializers.CharField()
    active = serializers.BooleanField()
    pool = serializers.IntegerField(help_text="Its pool (jackpots); the room's Bolsa for BA-19 / BA-20.")
    amount = money_field(money.METER_DIGITS, help_text="What its pool holds now, to the cent (rounded down).")
    next = ProgramNextSerializer(allow_null=True, help_text="In play in the next game? null when not.")
    digest = serializers.CharField(
        allow_blank=True,
        help_text="SHA-256 of the terms of the version in force (as the posted prize table prints it).",
    )
    digest_short = serializers.CharField(
        allow_blank=True, help_text='Its short form on the screens, "3F2A-9C10".'
    )


class ProgramVersionSerializer(serializers.Serializer[Any]):
    version = serializers.IntegerField()
    effective_from = serializers.DateTimeField()
    params = serializers.JSONField(help_text="As given (make_program's parameters).")
    provenance = serializers.DictField(
        child=serializers.CharField(), help_text="Where each value came from: configured, regulation..."
    )
    authorisation_ref = serializers.CharField(allow_blank=True)
    digest = serializers.CharField(allow_blank=True, help_text="SHA-256 of the version's terms.")
    created_by = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    in_force = serializers.BooleanField()


class ProgramDetailSerializer(ProgramSerializer):
    room = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    deactivated_at = serializers.DateTimeField(allow_null=True)
    versions = ProgramVersionSerializer(many=True)
    state = serializers.JSONField(help_text="Its step state (escalation, scheduled hours served...).")
    recent_games = serializers.ListField(
        child=serializers.DictField(), help_text="Its latest games: funding, pool, terms in play, result."
    )


class BolsaSerializer(serializers.Serializer[Any]):
    room = serializers.IntegerField()
    pool = serializers.IntegerField()
    funding_percent = serializers.DecimalField(max_digits=5, decimal_places=2)
    authorisation_ref = serializers.CharField()
    amount = money_field(
        money.METER_DIGITS, help_text="What the Bolsa Acumulada holds now, to the cent (rounded down)."
    )
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class PickSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    game = serializers.IntegerField()
    program = serializers.IntegerField()
    amount = money_field(money.PAYMENT_DIGITS, allow_null=True)
    max_ball = serializers.IntegerField(allow_null=True)
    colour = serializers.CharField(allow_blank=True)
    set_by = serializers.CharField(allow_null=True)
    set_at = serializers.DateTimeField()


class SimulationSerializer(serializers.Serializer[Any]):
    report = serializers.JSONField(
        help_text=(
            "Hit frequency (hits, hits_per_day, hits_per_game_in_play), average_prize and max_prize, "
            "days_to_trigger, returned_share of the sales, the awards and the day-by-day series "
            "(bingo.traditional.programs.simulate.SimulationReport.to_dict)."
        )
    )
    text = serializers.CharField(
        help_text="The same report, readable (as manage.py simulate_program prints)."
    )
    svg = serializers.CharField(help_text="The plot, an SVG document to show inline.")
