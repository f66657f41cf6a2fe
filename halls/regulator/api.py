"""The node's door for installations (HALL_ROLE=regulator; 404 in any other role): the feed.

``POST /api/regulator/feed/`` ``{"messages": [signed envelope, ...]}``: no session and no token, each
message carries its installation's signature instead (halls.regulator.services.intake checks it). 200
``{"accepted": <the installation's last accepted sequence>}``; a refused message stops the batch with a 4xx
in the house's shape, ``{"error": {"code", "message", "details": {"expected", "accepted"}}}`` (codes
``bad_signature`` 403, ``unknown_installation`` 404, ``out_of_order`` and ``replayed`` 409, ``schema``,
``shape``, ``format``, ``mixed_batch``, ``bad_batch`` 400), recorded at the node with nothing of it applied.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from halls.errors import NotFound
from halls.parsers import BoundedJSONParser
from halls.regulator.services import intake
from halls.serializers import ErrorSerializer


class FeedView(APIView):
    """Installations' feed: signed messages, no credential; only at a regulator's node."""

    authentication_classes: list[Any] = []
    permission_classes = [AllowAny]
    parser_classes = [BoundedJSONParser]

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        if settings.HALL_ROLE != "regulator":
            raise NotFound(_("This installation is not a regulator's node."), code="not_regulator")

    @extend_schema(
        operation_id="regulator_feed",
        summary="An installation's signed feed messages, accepted once and in order",
        request=inline_serializer(
            "FeedBatch", {"messages": serializers.ListField(child=serializers.DictField())}
        ),
        responses={
            200: inline_serializer("FeedAccepted", {"accepted": serializers.IntegerField()}),
            400: ErrorSerializer,
            403: ErrorSerializer,
            404: ErrorSerializer,
            409: ErrorSerializer,
        },
        auth=[],
        tags=["regulator"],
    )
    def post(self, request: Request) -> Response:
        data = request.data
        messages = data.get("messages") if isinstance(data, dict) else None
        received = intake.receive(messages=messages)
        return Response({"accepted": received.accepted})


urlpatterns = [
    path("regulator/feed/", FeedView.as_view(), name="api-regulator-feed"),
]
