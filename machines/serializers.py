"""Shapes of the machine part of the REST API: the registry, link groups, hand pays, the reconciliation
report and the gateway's HTTP batch. Money is a string ("1.00"); a device token appears once, in the
answer to the registration (or to a rotation) that made it."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from halls import money
from halls.cashier.api.payables import PayoutSerializer
from halls.serializers import money_field
from machines import protocol
from machines.models import Machine, MachineState, MachineType, Modality


# The machine's state is documented by a pattern, not an enum: drf-spectacular would make every enum a
# component named after the field, and "state" is the games' enum already.
@extend_schema_field({"type": "string", "pattern": f"^({'|'.join(MachineState.values)})$"})
class MachineStateField(serializers.ChoiceField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(choices=MachineState.choices, **kwargs)


# --- the registry ---------------------------------------------------------------------------------------


class MachineQuerySerializer(serializers.Serializer[Any]):
    venue = serializers.IntegerField(required=False, allow_null=True, default=None)


class MachineCreateSerializer(serializers.Serializer[Any]):
    venue = serializers.IntegerField()
    asset_number = serializers.CharField(
        max_length=40, help_text="Letters, digits, '.', '_' or '-'; it names the machine on the wire."
    )
    machine_type = serializers.ChoiceField(choices=MachineType.choices)
    modality = serializers.ChoiceField(choices=Modality.choices, required=False, default=Modality.INDIVIDUAL)
    positions = serializers.IntegerField(
        min_value=1, required=False, default=1, help_text="1 individual, 2 two-player, ≥ 2 multi-position."
    )
    manufacturer = serializers.CharField(max_length=80)
    model = serializers.CharField(max_length=80)
    serial = serializers.CharField(max_length=80)
    denomination = serializers.DecimalField(max_digits=8, decimal_places=2, min_value=money.CENT)
    paytable_id = serializers.CharField(max_length=60)
    software_version = serializers.CharField(
        max_length=protocol.MAX_TEXT, help_text="The approved version; a board reporting another is alerted."
    )
    location = serializers.CharField(max_length=120, required=False, allow_blank=True, default="")


class MachineSerializer(serializers.ModelSerializer[Machine]):
    state = MachineStateField(read_only=True)
    link_group = serializers.IntegerField(
        read_only=True, allow_null=True, help_text="The link group it is in now (its pool), if any."
    )
    link_group_code = serializers.CharField(read_only=True, allow_null=True)

    class Meta:
        model = Machine
        fields = [
            "id",
            "venue",
            "asset_number",
            "machine_type",
            "modality",
            "positions",
            "manufacturer",
            "model",
            "serial",
            "denomination",
            "paytable_id",
            "software_version",
            "location",
            "state",
            "lock_reason",
            "online",
            "last_seen_at",
            "last_seq",
            "last_play_at",
            "created_at",
            "link_group",
            "link_group_code",
        ]
        read_only_fields = fields


class MachineRegisteredSerializer(MachineSerializer):
    token = serializers.CharField(
        read_only=True,
        help_text="The device token, shown this once (only its hash is kept). The board connects to "
        "ws/machines/<asset_number>/?token=<token> or sends 'Authorization: Device <asset_number>:<token>'.",
    )

    class Meta(MachineSerializer.Meta):
        fields = [*MachineSerializer.Meta.fields, "token"]
        read_only_fields = fields


class DeviceTokenSerializer(serializers.Serializer[Any]):
    token = serializers.CharField(
        help_text="The new device token, shown this once; the old one stops working."
    )


class MachineStateRequestSerializer(serializers.Serializer[Any]):
    state = MachineStateField(help_text="in_service, locked (an operator lock) or out_of_service.")
    reason = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")


# --- reconciliation -------------------------------------------------------------------------------------


class GapSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    first_missing = serializers.IntegerField()
    last_missing = serializers.IntegerField()
    detected_at = serializers.DateTimeField()
    reconciled_at = serializers.DateTimeField(allow_null=True)
    missing_coin_in = money_field(money.METER_DIGITS, read_only=True, allow_null=True)
    missing_games = serializers.IntegerField(allow_null=True)
    note = serializers.CharField()


class ReconciliationRowSerializer(serializers.Serializer[Any]):
    snapshot = serializers.IntegerField(allow_null=True, help_text="None: the plays since the last snapshot.")
    from_seq = serializers.IntegerField(allow_null=True)
    to_seq = serializers.IntegerField(allow_null=True)
    from_at = serializers.DateTimeField(allow_null=True)
    to_at = serializers.DateTimeField(allow_null=True)
    coin_in = money_field(money.METER_DIGITS, read_only=True, allow_null=True)
    games_played = serializers.IntegerField(allow_null=True)
    coin_in_delta = money_field(money.METER_DIGITS, read_only=True, allow_null=True)
    bets_recorded = money_field(money.METER_DIGITS, read_only=True)
    coin_in_difference = money_field(money.METER_DIGITS, read_only=True, allow_null=True)
    games_delta = serializers.IntegerField(allow_null=True)
    plays_recorded = serializers.IntegerField()
    games_difference = serializers.IntegerField(allow_null=True)
    gaps = GapSerializer(many=True)
    status = serializers.ChoiceField(choices=["first", "ok", "gap_reconciled", "mismatch", "open"])


# --- link groups ----------------------------------------------------------------------------------------


class LinkGroupQuerySerializer(MachineQuerySerializer):
    pass


class LinkGroupCreateSerializer(serializers.Serializer[Any]):
    venue = serializers.IntegerField()
    code = serializers.CharField(max_length=40)
    name = serializers.CharField(max_length=120)
    pool = serializers.IntegerField(
        help_text="A pool without a table rule pack, of the venue or its network."
    )
    same_type_and_denomination = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Must the linked machines share type and denomination? Default: the jurisdiction's rule.",
    )


class LinkedMachineSerializer(serializers.Serializer[Any]):
    member = serializers.IntegerField(help_text="The link membership.")
    machine = serializers.IntegerField()
    asset_number = serializers.CharField()
    machine_type = serializers.CharField()
    denomination = money_field(money.METER_DIGITS, read_only=True)
    joined_at = serializers.DateTimeField()


class LinkGroupSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    venue = serializers.IntegerField()
    code = serializers.CharField()
    name = serializers.CharField()
    pool = serializers.IntegerField()
    pool_code = serializers.CharField()
    same_type_and_denomination = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    machines = LinkedMachineSerializer(many=True, help_text="The machines linked now.")


class LinkJoinSerializer(serializers.Serializer[Any]):
    machine = serializers.IntegerField(help_text="The machine to link (of the group's venue).")


class LinkMemberSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    group = serializers.IntegerField()
    machine = serializers.IntegerField()
    joined_at = serializers.DateTimeField()
    left_at = serializers.DateTimeField(allow_null=True)


# --- hand pays ------------------------------------------------------------------------------------------


class HitQuerySerializer(MachineQuerySerializer):
    pass


class MachineHitSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    machine = serializers.IntegerField()
    asset_number = serializers.CharField()
    location = serializers.CharField()
    group = serializers.CharField(help_text="The link group's code.")
    level = serializers.IntegerField()
    level_name = serializers.CharField()
    game_id = serializers.CharField()
    amount = money_field(money.METER_DIGITS, read_only=True)
    settlement = serializers.IntegerField(help_text="The pool engine's settlement of the award.")
    seq = serializers.IntegerField()
    reported_at = serializers.DateTimeField()
    paid_at = serializers.DateTimeField(allow_null=True)
    paid_by = serializers.CharField()
    payment_ref = serializers.CharField()
    payout = PayoutSerializer(
        allow_null=True, help_text="Its payable at the cashier: waiting or paid, when, by whom, how."
    )


class HandPayRequestSerializer(serializers.Serializer[Any]):
    payment_ref = serializers.CharField(
        max_length=120,
        required=False,
        allow_blank=True,
        default="",
        help_text="E.g. the cash voucher number.",
    )
    identification = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        help_text="The winner's identification at the cage (required at or above the AML threshold).",
    )


# --- the gateway's HTTP batch ---------------------------------------------------------------------------


class GatewayBatchSerializer(serializers.Serializer[Any]):
    """For the schema only: the body is parsed by machines.protocol, message by message."""

    messages = serializers.ListField(
        child=serializers.DictField(),
        max_length=protocol.MAX_BATCH,
        help_text=f"At most {protocol.MAX_BATCH} messages of at most {protocol.MAX_MESSAGE_BYTES} bytes each "
        '(play, meters, event, hit, hello, heartbeat), e.g. {"type": "play", "seq": 7, "game_id": "g-1", '
        '"bet": "1.00", "win": "0.00"}.',
    )


class LevelAmountSerializer(serializers.Serializer[Any]):
    level = serializers.CharField()
    amount = serializers.CharField(help_text='What the level shows, whole cents ("1234.56").')


class GatewayRepliesSerializer(serializers.Serializer[Any]):
    replies = serializers.ListField(
        child=serializers.DictField(),
        help_text='One per message, in order: {"type": "ack", "seq", "status": accepted|duplicate|rejected, '
        '"code", "message"} (+ "amount" and "lock" for a hit), or the welcome for a hello.',
    )
    levels = LevelAmountSerializer(
        many=True, help_text="The levels of the machine's link group now (for boards that poll)."
    )
