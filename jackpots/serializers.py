"""Shapes of the pool part of the REST API. Money is a string ("12.50"); the must-hit-by value never
appears."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from rest_framework import serializers

from halls import money
from halls.models import Jurisdiction
from halls.serializers import money_field
from jackpots.models import OverflowTo, SourceType
from jackpots.rulepacks import PACKS

# --- requests -------------------------------------------------------------------------------------------


class LevelSpecSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=60)
    seed = money_field(money.METER_DIGITS, money.METER_PLACES, min_value=0)
    contribution_rate = serializers.DecimalField(
        max_digits=7,
        decimal_places=6,
        min_value=0,
        max_value=1,
        help_text='Fraction of the bet to the meter ("0.05" = 5 %).',
    )
    reserve_rate = serializers.DecimalField(
        max_digits=7, decimal_places=6, min_value=0, max_value=1, required=False, default=Decimal(0)
    )
    ceiling = money_field(
        money.METER_DIGITS, money.METER_PLACES, min_value=0, required=False, allow_null=True, default=None
    )
    overflow_to = serializers.ChoiceField(
        choices=OverflowTo.choices, required=False, default=OverflowTo.RESERVE
    )
    mystery = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Must-hit-by: a secret value is drawn between seed and ceiling.",
    )
    kind = serializers.CharField(
        required=False,
        allow_null=True,
        default=None,
        help_text='"progressive" or "fixed"; default: the rule pack\'s kind.',
    )
    initial_reserve = money_field(
        money.METER_DIGITS, money.METER_PLACES, min_value=0, required=False, default=Decimal(0)
    )


class PoolPaytableRowSerializer(serializers.Serializer[Any]):
    category = serializers.CharField()
    percent = serializers.DecimalField(max_digits=7, decimal_places=4, required=False)
    multiple = serializers.DecimalField(max_digits=10, decimal_places=2, required=False)
    amount = money_field(money.PAYMENT_DIGITS, required=False)
    ties = serializers.CharField(required=False)


class PoolCreateSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=120)
    code = serializers.CharField(max_length=40)
    jurisdiction = serializers.ChoiceField(choices=Jurisdiction.choices)
    currency = serializers.CharField(max_length=3, required=False, default="EUR")
    authorisation_ref = serializers.CharField(max_length=120)
    rule_pack = serializers.ChoiceField(
        choices=["", *sorted(PACKS)],
        allow_blank=True,
        help_text="A rule pack code; blank for award_level pools.",
    )
    venue = serializers.IntegerField(required=False, allow_null=True, default=None)
    network = serializers.IntegerField(required=False, allow_null=True, default=None)
    carousel_bet = money_field(money.PAYMENT_DIGITS, required=False, allow_null=True, default=None)
    levels = LevelSpecSerializer(many=True)
    authorised_paytable = PoolPaytableRowSerializer(many=True, required=False, allow_null=True, default=None)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if (attrs.get("venue") is None) == (attrs.get("network") is None):
            raise serializers.ValidationError({"venue": "Give exactly one of venue or network."})
        return attrs


class MemberCreateSerializer(serializers.Serializer[Any]):
    source_type = serializers.ChoiceField(choices=SourceType.choices)
    source_id = serializers.CharField(max_length=60)
    venue = serializers.IntegerField()


class ParameterChangeRequestSerializer(serializers.Serializer[Any]):
    changes = serializers.DictField(
        help_text="Any of name, seed, contribution_rate, reserve_rate, ceiling, overflow_to, mystery "
        '(amounts as strings, e.g. {"contribution_rate": "0.06"}).'
    )
    authorisation_ref = serializers.CharField(max_length=120)


class CorrectionRequestSerializer(serializers.Serializer[Any]):
    amount_delta = money_field(
        money.METER_DIGITS, money.METER_PLACES, help_text="Signed: negative lowers the meter."
    )
    reason = serializers.CharField(max_length=300)
    authorised_by = serializers.CharField(max_length=150, help_text="Who authorised the correction.")


class BalanceQuerySerializer(serializers.Serializer[Any]):
    start = serializers.DateTimeField(required=False, allow_null=True, default=None)
    end = serializers.DateTimeField(required=False, allow_null=True, default=None)


class LedgerQuerySerializer(serializers.Serializer[Any]):
    before = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=1)
    limit = serializers.IntegerField(required=False, default=100, min_value=1, max_value=1000)


class PoolQuerySerializer(serializers.Serializer[Any]):
    venue = serializers.IntegerField(required=False, allow_null=True, default=None)


# --- answers --------------------------------------------------------------------------------------------


class PoolHitSerializer(serializers.Serializer[Any]):
    at = serializers.DateTimeField()
    level = serializers.IntegerField()
    level_name = serializers.CharField()
    kind = serializers.CharField()
    seat = serializers.CharField()
    hand = serializers.CharField()
    category = serializers.CharField()
    amount = serializers.CharField()

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        # "source" cannot be a class attribute: it is the serializer field's own.
        fields = super().get_fields()
        fields["source"] = serializers.CharField(help_text="The member that hit (table, machine ...).")
        return fields


class PoolLevelMeterSerializer(serializers.Serializer[Any]):
    level = serializers.IntegerField()
    position = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()
    amount = serializers.CharField(help_text="Live meter, capped at the ceiling, whole cents rounded down.")
    seed = serializers.CharField()
    ceiling = serializers.CharField(allow_null=True)
    reserve = serializers.CharField()
    overflow = serializers.CharField()
    hits = serializers.IntegerField()
    total_paid = serializers.CharField()
    last_hits = PoolHitSerializer(many=True)


class LevelParametersSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    position = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()
    seed = serializers.CharField()
    contribution_rate = serializers.CharField()
    reserve_rate = serializers.CharField()
    ceiling = serializers.CharField(allow_null=True)
    overflow_to = serializers.CharField()
    mystery = serializers.BooleanField()
    params_version = serializers.IntegerField()


class MemberSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    source_type = serializers.CharField()
    source_id = serializers.CharField()
    key = serializers.CharField()
    venue = serializers.IntegerField()
    added_at = serializers.DateTimeField()
    added_by = serializers.CharField()
    removed_at = serializers.DateTimeField(allow_null=True)
    removed_by = serializers.CharField()


class PoolSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    code = serializers.CharField()
    name = serializers.CharField()
    jurisdiction = serializers.CharField()
    currency = serializers.CharField()
    authorisation_ref = serializers.CharField()
    rule_pack = serializers.CharField()
    carousel_bet = serializers.CharField(allow_null=True)
    venue = serializers.IntegerField(allow_null=True)
    network = serializers.IntegerField(allow_null=True)
    active = serializers.BooleanField()
    levels = PoolLevelMeterSerializer(many=True, help_text="The meters.")
    last_hits = PoolHitSerializer(many=True)


class PoolDetailSerializer(PoolSerializer):
    parameters = LevelParametersSerializer(many=True)
    members = MemberSerializer(many=True)


class ParameterChangeSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    pool = serializers.IntegerField()
    level = serializers.IntegerField()
    old = serializers.DictField()
    new = serializers.DictField()
    authorisation_ref = serializers.CharField()
    actor = serializers.CharField()
    changed_at = serializers.DateTimeField()


class CorrectionSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    pool = serializers.IntegerField()
    level = serializers.IntegerField()
    kind = serializers.CharField()
    amount = serializers.CharField()
    reason = serializers.CharField()
    authorised_by = serializers.CharField()
    actor = serializers.CharField()
    created_at = serializers.DateTimeField()
    meter = serializers.CharField(help_text="The level's meter after the correction (whole cents down).")


class LevelBalanceSerializer(serializers.Serializer[Any]):
    level_id = serializers.IntegerField()
    name = serializers.CharField()
    opening = serializers.CharField()
    seeds = serializers.CharField()
    contributions = serializers.CharField()
    overflow_in = serializers.CharField()
    corrections = serializers.CharField()
    awards = serializers.CharField()
    overflow_to_reserve = serializers.CharField()
    overflow_to_next = serializers.CharField()
    reserve_to_meter = serializers.CharField()
    reserve_moves = serializers.CharField()
    closing = serializers.CharField()
    closing_from_ledger = serializers.CharField()
    recorded = serializers.BooleanField()
    opening_reserve = serializers.CharField()
    reserve_in = serializers.CharField()
    closing_reserve = serializers.CharField()
    closing_reserve_from_ledger = serializers.CharField()
    bets = serializers.CharField()
    house = serializers.CharField()
    contribution_count = serializers.IntegerField()
    operator_prizes = serializers.CharField()
    prizes_paid = serializers.CharField()
    hits = serializers.IntegerField()
    left = serializers.CharField()
    right = serializers.CharField()
    meter_holds = serializers.BooleanField()
    reserve_holds = serializers.BooleanField()
    holds = serializers.BooleanField()


class BalanceSerializer(serializers.Serializer[Any]):
    pool = serializers.IntegerField()
    code = serializers.CharField()
    currency = serializers.CharField()
    start = serializers.DateTimeField(allow_null=True)
    end = serializers.DateTimeField(allow_null=True)
    generated_at = serializers.DateTimeField()
    holds = serializers.BooleanField()
    min_return = serializers.CharField(allow_null=True)
    meets_min_return = serializers.BooleanField(allow_null=True)
    levels = LevelBalanceSerializer(many=True)


class LedgerSerializer(serializers.Serializer[Any]):
    settlements = serializers.ListField(child=serializers.DictField())
    moves = serializers.ListField(child=serializers.DictField())
    changes = serializers.ListField(child=serializers.DictField())
    contributions = serializers.ListField(child=serializers.DictField())
    next_before = serializers.IntegerField(allow_null=True)
