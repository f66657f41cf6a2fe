"""Shapes of the halls part of the REST API: the error body, venues, game sessions and the token."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers
from rest_framework.fields import empty

from halls import money
from halls.models import CheckName, GameSession, SessionCheck, Venue


def slug(slug_field: str, **kwargs: Any) -> serializers.SlugRelatedField[Any]:
    """A related object shown by one of its fields (a user by username, a series by code), read-only."""
    return serializers.SlugRelatedField(slug_field=slug_field, read_only=True, **kwargs)


def money_field(
    digits: int = money.PRICE_DIGITS, places: int = money.CENT_PLACES, **kwargs: Any
) -> serializers.DecimalField:
    """An amount of money in the API, every app's: a plain decimal string out ("12.50"), exact Decimal in.
    `digits` is one of halls.money's widths (PRICE_DIGITS, PAYMENT_DIGITS, METER_DIGITS)."""
    return serializers.DecimalField(max_digits=digits, decimal_places=places, **kwargs)


class StatedBooleanField(serializers.BooleanField):
    """A yes/no the client must state, in JSON and in a form alike. DRF reads a boolean left out of a form
    (``application/x-www-form-urlencoded``, ``multipart/form-data``) as an unticked checkbox, False: here it
    is missing, refused with 400 naming the field, never taken for a "no"."""

    default_empty_html = empty


# --- The error body every refusal answers with (halls.api_errors) ----------------------------------------


class ErrorDetailSerializer(serializers.Serializer[Any]):
    code = serializers.CharField(help_text="Stable machine code, e.g. wrong_state, unknown_game, invalid.")
    message = serializers.CharField(help_text="A sentence a person can act on.")
    details = serializers.DictField(
        required=False, help_text="Facts about the refusal (e.g. the state, the serials already sold)."
    )

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        # "fields" cannot be a class attribute: it is the serializer's own property.
        fields = super().get_fields()
        fields["fields"] = serializers.DictField(
            required=False,
            help_text="Per-field messages when the request body itself is malformed (code invalid).",
        )
        return fields


class ErrorSerializer(serializers.Serializer[Any]):
    error = ErrorDetailSerializer()


ERROR_DESCRIPTIONS = {
    400: "Bad input: a malformed field (code invalid, with fields) or an impossible request. "
    "Nothing written.",
    401: "Not authenticated: send 'Authorization: Token <key>' or a session cookie.",
    403: "Your role in this venue does not allow this action (code role_required).",
    404: "Unknown object, or one of another venue (code unknown_<thing>).",
    409: "Valid on its own but not now: wrong state, already drawn, already sold... Nothing written.",
}


def error_responses(*statuses: int) -> dict[int, OpenApiResponse]:
    """The documented error answers of an endpoint: 401 always, plus the given ones."""
    wanted = sorted({401, *statuses})
    return {s: OpenApiResponse(ErrorSerializer, description=ERROR_DESCRIPTIONS[s]) for s in wanted}


# --- Auth -----------------------------------------------------------------------------------------------


class TokenRequestSerializer(serializers.Serializer[Any]):
    username = serializers.CharField()
    password = serializers.CharField(style={"input_type": "password"}, trim_whitespace=False)


class TokenSerializer(serializers.Serializer[Any]):
    token = serializers.CharField(help_text="Send as 'Authorization: Token <token>'.")


# --- Venues ---------------------------------------------------------------------------------------------


class VenueSerializer(serializers.ModelSerializer[Venue]):
    roles = serializers.SerializerMethodField(
        help_text="What you may do here (an operator holds every role)."
    )

    class Meta:
        model = Venue
        fields = [
            "id",
            "name",
            "licence_number",
            "jurisdiction",
            "hall_category",
            "time_zone",
            "currency",
            "line_percent",
            "bingo_percent",
            "roles",
        ]

    def get_roles(self, venue: Venue) -> list[str]:
        roles: dict[int, list[str]] = self.context.get("roles", {})
        return roles.get(venue.pk, [])


# --- Game sessions --------------------------------------------------------------------------------------


class SessionOpenSerializer(serializers.Serializer[Any]):
    blower_ok = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text=(
            "Left out: the blower check recorded for this session (POST /api/rooms/{id}/checks/) counts. "
            "true: the opener states it checked and working, and is named as its checker; false: refused."
        ),
    )
    reserve_ok = serializers.BooleanField(
        required=False, allow_null=True, default=None, help_text="The reserve device, as blower_ok."
    )
    reader_ok = serializers.BooleanField(
        required=False, allow_null=True, default=None, help_text="The ball reader, as blower_ok."
    )
    inspection_balls = serializers.ListField(
        child=serializers.IntegerField(),
        allow_empty=True,
        max_length=200,
        help_text="The 90 numbers of the inspection draw in the order they came out: each of 1..90 once.",
    )


class CheckRecordSerializer(serializers.Serializer[Any]):
    check = serializers.ChoiceField(
        choices=[CheckName.BLOWER, CheckName.RESERVE, CheckName.READER],
        help_text="blower, reserve or reader: the device checked.",
    )
    ok = StatedBooleanField(
        help_text="The device was checked and works (required, in JSON and in a form: never read as false)."
    )
    note = serializers.CharField(
        max_length=500,
        required=False,
        allow_blank=True,
        default="",
        help_text="Why the device does not work: required when ok is false (400 note_required).",
    )


class SessionCheckSerializer(serializers.ModelSerializer[SessionCheck]):
    check = serializers.CharField(source="check_name", read_only=True)
    checked_by = slug("username")

    class Meta:
        model = SessionCheck
        fields = ["id", "room", "session", "check", "ok", "checked_by", "checked_at", "note"]
        read_only_fields = fields


class SessionSerializer(serializers.ModelSerializer[GameSession]):
    opened_by = slug("username")
    closed_by = slug("username", allow_null=True)
    inspection_balls = serializers.ListField(child=serializers.IntegerField(), read_only=True)
    is_open = serializers.BooleanField(read_only=True)
    checks = SessionCheckSerializer(many=True, read_only=True, help_text="Each check: who ran it, when.")

    class Meta:
        model = GameSession
        fields = [
            "id",
            "room",
            "opened_at",
            "opened_by",
            "blower_ok",
            "reserve_ok",
            "reader_ok",
            "inspection_balls",
            "checks",
            "closed_at",
            "closed_by",
            "is_open",
        ]
        read_only_fields = fields


class ChainReportSerializer(serializers.Serializer[Any]):
    """One chain's verification (halls.chains.ChainReport)."""

    kind = serializers.CharField(
        help_text="venue (audit chain), pool (seals), ledger (a venue's cashier ledger against the entries "
        "that sealed it), anchors or triggers."
    )
    id = serializers.IntegerField()
    name = serializers.CharField(help_text="The venue's name or the pool's code.")
    ok = serializers.BooleanField()
    length = serializers.IntegerField(help_text="Links verified (entries or seals).")
    first_bad_seq = serializers.IntegerField(
        allow_null=True, help_text="Position of the first bad link, from 1."
    )
    first_bad_id = serializers.IntegerField(
        allow_null=True, help_text="The first bad link's id (an audit entry; of a ledger, a transaction)."
    )
    reason = serializers.CharField(allow_blank=True)
    legacy = serializers.IntegerField(help_text="Links from before the chain was keyed (plain SHA-256).")
    anchored_seq = serializers.IntegerField(allow_null=True, help_text="The latest anchored length.")


class AuditReportSerializer(serializers.Serializer[Any]):
    ok = serializers.BooleanField()
    chains = ChainReportSerializer(many=True)


class RoomVoiceSerializer(serializers.Serializer[Any]):
    """The caller's voice of a room: its audio screen (none: silent), muted, volume 0–100."""

    room = serializers.IntegerField(read_only=True)
    audio_screen = serializers.IntegerField(read_only=True, allow_null=True)
    audio_screen_name = serializers.CharField(read_only=True, allow_null=True)
    muted = serializers.BooleanField(required=False)
    volume = serializers.IntegerField(required=False, min_value=0, max_value=100)


class AudioScreenSerializer(serializers.Serializer[Any]):
    screen = serializers.IntegerField(
        min_value=1,
        max_value=2**63 - 1,
        allow_null=True,
        help_text="The room's screen that plays the voice; null: none.",
    )
