"""The link's request and answer bodies (POST /api/link/messages/, GET /api/link/streams/<stream>/)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers


class LinkMessageSerializer(serializers.Serializer[Any]):
    sequence = serializers.IntegerField(min_value=1)
    kind = serializers.CharField(max_length=60)
    payload = serializers.DictField()


class LinkBatchSerializer(serializers.Serializer[Any]):
    messages = serializers.ListField(child=LinkMessageSerializer(), max_length=1000)
    # The highest sequence of the venue's outbox (the central shows its backlog), the venue's clock.
    reported = serializers.IntegerField(min_value=0, required=False)
    clock = serializers.DateTimeField(required=False)


class AcceptedSerializer(serializers.Serializer[Any]):
    sequence = serializers.IntegerField()
    status = serializers.ChoiceField(choices=["applied", "refused", "duplicate"])
    answer = serializers.DictField()


class AcceptedBatchSerializer(serializers.Serializer[Any]):
    accepted = AcceptedSerializer(many=True)
    applied_sequence = serializers.IntegerField()


class StreamEntrySerializer(serializers.Serializer[Any]):
    stream = serializers.CharField()
    sequence = serializers.IntegerField()
    kind = serializers.CharField()
    payload = serializers.DictField()


class StreamPageSerializer(serializers.Serializer[Any]):
    stream = serializers.CharField()
    head = serializers.IntegerField()
    entries = StreamEntrySerializer(many=True)
