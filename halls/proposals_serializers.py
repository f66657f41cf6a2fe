"""What the four-eyes API reads and answers: proposals, and the second person's decision."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from halls.models import Proposal, ProposalStatus


class ProposalSerializer(serializers.ModelSerializer[Proposal]):
    proposed_by = serializers.CharField(source="proposed_by.username", read_only=True)
    decided_by = serializers.CharField(source="decided_by.username", read_only=True, default=None)

    class Meta:
        model = Proposal
        fields = (
            "id",
            "venue",
            "kind",
            "target",
            "params",
            "digest",
            "proposed_by",
            "proposed_at",
            "expires_at",
            "status",
            "decided_by",
            "decided_at",
            "reason",
            "posted_digest",
            "result",
        )


class ProposalQuerySerializer(serializers.Serializer[Any]):
    venue = serializers.IntegerField(required=False, default=None, allow_null=True)
    status = serializers.ChoiceField(choices=ProposalStatus.choices, required=False, default=None)


class ProposalCreateSerializer(serializers.Serializer[Any]):
    venue = serializers.IntegerField()
    kind = serializers.CharField(max_length=60)
    target = serializers.CharField(max_length=120)
    params = serializers.JSONField(help_text="The change, as the kind reads it (a JSON object).")
    reason = serializers.CharField(max_length=500, required=False, default="", allow_blank=True)


class DecisionSerializer(serializers.Serializer[Any]):
    password = serializers.CharField(
        max_length=256, trim_whitespace=False, help_text="The deciding person's own password, typed now."
    )
    username = serializers.CharField(
        max_length=150,
        required=False,
        default="",
        allow_blank=True,
        help_text="Who decides, when not the logged-in user (a second person at the same terminal).",
    )


class ApprovalSerializer(DecisionSerializer):
    posted_digest = serializers.CharField(
        max_length=300,
        required=False,
        default="",
        allow_blank=True,
        help_text=(
            "The digest printed on the posted sheet (required by the kinds that post one): as printed, in "
            'groups of four ("3F2A 9C10 …"), or the URL its QR code holds.'
        ),
    )


class RejectionSerializer(DecisionSerializer):
    reason = serializers.CharField(max_length=500, required=False, default="", allow_blank=True)
