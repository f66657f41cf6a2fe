"""The central's doors of the link (HALL_ROLE=central), for venue installations, not people.

Each request carries the venue's credential, ``Authorization: Link <key>:<secret>``; a wrong, unknown or
revoked one is 401 (``bad_credential``, ``revoked_credential``) and nothing is written. Thin doors: parse,
authenticate, call one service.

- ``POST /api/link/messages/`` ``{"messages": [{sequence, kind, payload}, …], "reported", "clock"}``: each
  message accepted in order (services.inbox.accept_many, consecutive ones in one transaction where the
  lock order allows), the contact recorded with them: 200 with each one's Accepted; an out of order one
  stops the batch with 409 ``out_of_order``, details ``expected`` and the ones accepted before it.
- ``GET /api/link/streams/<stream>/?after=N``: the stream's entries past N (at most 500), and its head.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.conf import settings
from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from halls.errors import InvalidInput, NotFound
from halls.link.serializers import AcceptedBatchSerializer, LinkBatchSerializer, StreamPageSerializer
from halls.link.services import credentials, inbox, presence, reach, streams
from halls.parsers import BoundedJSONParser
from halls.serializers import ErrorSerializer


class LinkView(APIView):
    """A door for venues: no session, no token, the link credential instead; only at the central."""

    authentication_classes: list[Any] = []
    permission_classes = [AllowAny]
    parser_classes = [BoundedJSONParser]

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        if settings.HALL_ROLE != "central":
            raise NotFound(_("This installation is a venue, not the central."), code="not_central")
        self.venue_id = credentials.from_header(request.META.get("HTTP_AUTHORIZATION", ""))


class MessagesView(LinkView):
    @extend_schema(
        operation_id="link_messages",
        summary="A venue's outbox messages, accepted in order, each once",
        request=LinkBatchSerializer,
        responses={
            200: AcceptedBatchSerializer,
            400: ErrorSerializer,
            401: ErrorSerializer,
            409: ErrorSerializer,
        },
        auth=[],
        tags=["link"],
    )
    def post(self, request: Request) -> Response:
        serializer = LinkBatchSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if not data["messages"]:
            presence.seen(venue_id=self.venue_id, reported=data.get("reported"), clock=data.get("clock"))
        batch = inbox.accept_many(
            venue_id=self.venue_id,
            messages=data["messages"],
            reported=data.get("reported"),
            clock=data.get("clock"),
        )
        accepted = [asdict(a) for a in batch.accepted]
        if batch.out_of_order is not None:
            batch.out_of_order.details["accepted"] = accepted
            raise batch.out_of_order
        applied = accepted[-1]["sequence"] if accepted else None
        return Response({"accepted": accepted, "applied_sequence": applied if applied is not None else 0})


class StreamView(LinkView):
    @extend_schema(
        operation_id="link_stream",
        summary="A stream's entries after a sequence (a venue's catch-up)",
        parameters=[OpenApiParameter("after", int, description="The last sequence the venue applied.")],
        responses={
            200: StreamPageSerializer,
            401: ErrorSerializer,
            403: ErrorSerializer,
            404: ErrorSerializer,
        },
        auth=[],
        tags=["link"],
    )
    def get(self, request: Request, stream: str) -> Response:
        raw = request.query_params.get("after", "0")
        if not raw.isdigit() or len(raw) > 18:
            raise InvalidInput(_("“after” must be a sequence number."), code="bad_after")
        reach.check(venue_id=self.venue_id, stream=stream)
        presence.seen(venue_id=self.venue_id)
        entries = [
            {"stream": e.stream, "sequence": e.sequence, "kind": e.kind, "payload": e.payload}
            for e in streams.after(stream=stream, sequence=int(raw))
        ]
        return Response({"stream": stream, "head": streams.head(stream=stream), "entries": entries})


urlpatterns = [
    path("link/messages/", MessagesView.as_view(), name="api-link-messages"),
    path("link/streams/<str:stream>/", StreamView.as_view(), name="api-link-stream"),
]
