"""The interconnected prize's API bodies (bingo.network.interconnected.api)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

from bingo.network.interconnected.models import PrizeKind
from halls import money
from halls.serializers import money_field


class PrizeCreateSerializer(serializers.Serializer[Any]):
    network = serializers.CharField(max_length=40, help_text=_("The network's code."))
    kind = serializers.ChoiceField(
        choices=PrizeKind.choices,
        default=PrizeKind.INTERCONNECTED,
        help_text=_("interconnected (IB-01), or automatic bingo's gran_linea / gran_bingo (AB-05, AB-08)"),
    )
    code = serializers.CharField(max_length=30)
    name = serializers.CharField(max_length=120)
    percent = serializers.DecimalField(max_digits=5, decimal_places=2, help_text=_("% of sales to the meter"))
    reserve_percent = serializers.DecimalField(max_digits=5, decimal_places=2, default=Decimal(0))
    max_ball = serializers.IntegerField(
        min_value=1,
        max_value=90,
        required=False,
        allow_null=True,
        default=None,
        help_text=_("An interconnected prize's (required); a Gran prize has none"),
    )
    auto_rounds = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text=_("Rounds open by themselves (a Gran prize's by default)"),
    )
    seed = money_field(money.METER_DIGITS, money.CENT_PLACES)
    wait_seconds = serializers.IntegerField(min_value=60, help_text=_("A round's bounded wait"))
    authorisation_ref = serializers.CharField(max_length=120)
    halls = serializers.ListField(
        child=serializers.CharField(max_length=60), min_length=1, help_text=_("Licence numbers")
    )


class NetworkPrizeSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    network = serializers.CharField()
    code = serializers.CharField()
    kind = serializers.CharField()
    name = serializers.CharField()
    percent = serializers.DecimalField(max_digits=5, decimal_places=2)
    reserve_percent = serializers.DecimalField(max_digits=5, decimal_places=2)
    max_ball = serializers.IntegerField()
    wait_seconds = serializers.IntegerField()
    auto_rounds = serializers.BooleanField()
    pool = serializers.IntegerField()
    meter = money_field(money.METER_DIGITS)
    halls = serializers.ListField(child=serializers.CharField())
    active = serializers.BooleanField()


class RoundOpenSerializer(serializers.Serializer[Any]):
    wait_seconds = serializers.IntegerField(min_value=60, required=False, allow_null=True, default=None)


class ShareSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    hall = serializers.CharField()
    card = serializers.CharField()
    amount = money_field(money.PAYMENT_DIGITS)


class RoundHallSerializer(serializers.Serializer[Any]):
    hall = serializers.CharField()
    game = serializers.IntegerField()
    sales = money_field(money.PAYMENT_DIGITS, allow_null=True)
    to_meter = money_field(money.METER_DIGITS, money.METER_PLACES, allow_null=True)
    operator = serializers.CharField()
    region = serializers.CharField()
    result = serializers.CharField(help_text=_("bingo, none, void, late or missing"))
    ordinal = serializers.IntegerField(allow_null=True)
    cards = serializers.ListField(child=serializers.CharField())


class RoundSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    number = serializers.IntegerField()
    state = serializers.CharField()
    max_ball = serializers.IntegerField()
    expected = serializers.ListField(child=serializers.CharField())
    opened_at = serializers.DateTimeField()
    closes_at = serializers.DateTimeField()
    decided_at = serializers.DateTimeField(allow_null=True)
    rule = serializers.CharField()
    ordinal = serializers.IntegerField(allow_null=True)
    pool_amount = money_field(money.METER_DIGITS, money.METER_PLACES, allow_null=True)
    share = money_field(money.PAYMENT_DIGITS, allow_null=True)
    remainder = money_field(money.METER_DIGITS, money.METER_PLACES, allow_null=True)
    missing = serializers.ListField(child=serializers.CharField())
    halls = RoundHallSerializer(many=True)
    shares = ShareSerializer(many=True)


class MembershipCreateSerializer(serializers.Serializer[Any]):
    room = serializers.IntegerField()
    network = serializers.CharField(max_length=40)
    prize = serializers.CharField(max_length=30)


class MembershipSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    room = serializers.IntegerField()
    network = serializers.CharField()
    prize = serializers.CharField()
    active = serializers.BooleanField()
    meter = money_field(money.METER_DIGITS, allow_null=True)
    max_ball = serializers.IntegerField(allow_null=True)


class SpecialityMembershipCreateSerializer(serializers.Serializer[Any]):
    speciality = serializers.IntegerField(help_text=_("The automatic-bingo speciality of your venue."))
    network = serializers.CharField(max_length=40)
    prize = serializers.CharField(max_length=30, help_text=_("The network prize's code."))
    table_code = serializers.CharField(
        max_length=30, help_text=_("The speciality's Gran Línea / Gran Bingo (its table's) that plays it.")
    )


class SpecialityMembershipSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    speciality = serializers.IntegerField()
    network = serializers.CharField()
    prize = serializers.CharField()
    table_code = serializers.CharField()
    active = serializers.BooleanField()
    meter = money_field(money.METER_DIGITS, allow_null=True)
