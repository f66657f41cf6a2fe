"""What the regions API reads and answers: regions, operators, agreements, networks with their members."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from halls.models import Jurisdiction, Network, Operator, Region, RegionAgreement, Venue


class RegionSerializer(serializers.ModelSerializer[Region]):
    class Meta:
        model = Region
        fields = ("id", "code", "name", "jurisdiction")


class RegionCreateSerializer(serializers.Serializer[Any]):
    code = serializers.CharField(max_length=20)
    name = serializers.CharField(max_length=120)
    jurisdiction = serializers.ChoiceField(choices=Jurisdiction.choices)


class RegionUpdateSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=120, required=False)
    jurisdiction = serializers.ChoiceField(choices=Jurisdiction.choices, required=False)


class OperatorSerializer(serializers.ModelSerializer[Operator]):
    class Meta:
        model = Operator
        fields = ("id", "name", "tax_id")


class OperatorCreateSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=160)
    tax_id = serializers.CharField(max_length=20)


class RegionAgreementSerializer(serializers.ModelSerializer[RegionAgreement]):
    regions = serializers.SerializerMethodField()
    operators = serializers.SerializerMethodField()
    valid_today = serializers.SerializerMethodField(
        help_text="Both documents signed, in its period, not ended."
    )
    missing = serializers.SerializerMethodField(help_text="What keeps it from being valid today.")

    class Meta:
        model = RegionAgreement
        fields = (
            "id",
            "regions",
            "operator_agreement_ref",
            "operator_agreement_signed_on",
            "operators",
            "protocol_ref",
            "protocol_signed_on",
            "valid_from",
            "valid_until",
            "recorded_at",
            "ended_at",
            "ended_as",
            "end_note",
            "valid_today",
            "missing",
        )

    def get_regions(self, agreement: RegionAgreement) -> list[str]:
        return [agreement.region_a.code, agreement.region_b.code]

    def get_operators(self, agreement: RegionAgreement) -> list[str]:
        return sorted(o.tax_id for o in agreement.operators.all())

    def get_valid_today(self, agreement: RegionAgreement) -> bool:
        return not self.get_missing(agreement)

    def get_missing(self, agreement: RegionAgreement) -> list[str]:
        return agreement.missing_on(self.context["today"])


class AgreementDocumentsSerializer(serializers.Serializer[Any]):
    operator_agreement_ref = serializers.CharField(max_length=120, required=False, default="")
    operator_agreement_signed_on = serializers.DateField(required=False, allow_null=True, default=None)
    operators = serializers.ListField(
        child=serializers.IntegerField(), required=False, default=list, help_text="Operator ids, the parties."
    )
    protocol_ref = serializers.CharField(max_length=120, required=False, default="")
    protocol_signed_on = serializers.DateField(required=False, allow_null=True, default=None)


class RegionAgreementCreateSerializer(AgreementDocumentsSerializer):
    regions = serializers.ListField(
        child=serializers.CharField(), min_length=2, max_length=2, help_text="The two regions' codes."
    )
    valid_from = serializers.DateField()
    valid_until = serializers.DateField(required=False, allow_null=True, default=None)


class AgreementRevokeSerializer(serializers.Serializer[Any]):
    note = serializers.CharField(max_length=240, required=False, default="", allow_blank=True)


class VenuePlaceSerializer(serializers.Serializer[Any]):
    region = serializers.CharField(required=False, allow_null=True, default=None, help_text="Region code.")
    operator = serializers.CharField(
        required=False, allow_null=True, default=None, help_text="Operator tax id."
    )


class NetworkMembershipSerializer(serializers.Serializer[Any]):
    venue = serializers.IntegerField(help_text="The venue joining or leaving (you are its operator).")


class NetworkMemberSerializer(serializers.ModelSerializer[Venue]):
    region = serializers.SerializerMethodField()
    operator = serializers.SerializerMethodField()

    class Meta:
        model = Venue
        fields = ("id", "name", "licence_number", "region", "operator")

    def get_region(self, venue: Venue) -> str | None:
        return venue.region.code if venue.region else None

    def get_operator(self, venue: Venue) -> str | None:
        return venue.operator.tax_id if venue.operator else None


class NetworkWithMembersSerializer(serializers.ModelSerializer[Network]):
    venues = NetworkMemberSerializer(many=True, read_only=True)

    class Meta:
        model = Network
        fields = ("id", "code", "name", "jurisdiction", "venues")
