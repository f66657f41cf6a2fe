"""Cash devices: the operator registers them (the device token is shown once), rotates their token and
retires them (/api/cashier/venues/<venue>/devices/); a device posts its messages with
`Authorization: CashDevice <id>:<token>` (/api/cashier/device/notes-in/)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.urls import path
from django.utils.translation import gettext
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from halls import access, throttling
from halls.api import HallAPIView, actor, valid
from halls.cashier.models import CashDevice
from halls.cashier.services import devices
from halls.cashier.services import ledger as books
from halls.models import Role, Venue
from halls.serializers import ErrorSerializer, error_responses

# --- Device authentication ------------------------------------------------------------------------------


class CashDeviceAuthentication(BaseAuthentication):
    """``Authorization: CashDevice <id>:<token>``: the cash device in service whose token it is."""

    keyword = "CashDevice"

    def authenticate(self, request: Request) -> tuple[AnonymousUser, CashDevice] | None:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != self.keyword.lower().encode():
            return None
        try:
            ident, _sep, token = parts[1].decode("ascii").partition(":") if len(parts) == 2 else ("", "", "")
        except UnicodeDecodeError:
            ident = token = ""
        # An address that sent too many wrong tokens is refused before its token is looked at.
        throttling.check_failures(request, "device_failures")
        device = None
        if ident.isdigit() and len(ident) <= 18 and token:
            device = devices.authenticate(device_id=int(ident), token=token)
        if device is None:
            throttling.count_failure(request, "device_failures")
            raise exceptions.AuthenticationFailed(
                gettext(
                    "Unknown or retired cash device, or a wrong token: send "
                    "'Authorization: CashDevice <id>:<token>'."
                ),
                code="bad_device_token",
            )
        return AnonymousUser(), device

    def authenticate_header(self, request: Request) -> str:
        return f'{self.keyword} realm="cashier"'


class CashDeviceAuthenticationScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "halls.cashier.api.devices.CashDeviceAuthentication"
    name = "cashDeviceAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "'CashDevice <device id>:<device token>' (the token given at registration).",
        }


class IsCashDevice(BasePermission):
    def has_permission(self, request: Request, view: Any) -> bool:
        return isinstance(request.auth, CashDevice)


# --- Shapes ---------------------------------------------------------------------------------------------


class CashDeviceSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()
    active = serializers.BooleanField()
    stacker = serializers.SerializerMethodField(help_text="The notes in its stacker not yet collected.")

    def get_stacker(self, device: CashDevice) -> str:
        return str(books.device_account(device).balance)


class CashDeviceTokenSerializer(serializers.Serializer[Any]):
    device = CashDeviceSerializer()
    token = serializers.CharField(help_text="Shown this once: only its hash is kept.")


class CashDeviceRequestSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=80)
    kind = serializers.CharField(max_length=20, help_text="terminal, bill_reader or kiosk.")


class CashDeviceNotesInSerializer(serializers.Serializer[Any]):
    seq = serializers.IntegerField(
        min_value=0, max_value=devices.MAX_SEQ, help_text="The device's own message number, once each."
    )
    card = serializers.CharField(max_length=40, help_text='The card\'s number or QR payload "TJ:<number>".')
    amount = serializers.CharField(max_length=40, help_text="The notes taken, a decimal string ('20.00').")


class CashDeviceNotesInResultSerializer(serializers.Serializer[Any]):
    seq = serializers.IntegerField()
    card = serializers.CharField()
    amount = serializers.CharField()
    balance = serializers.CharField(help_text="The card's balance after the notes (at the first answer).")
    transaction = serializers.IntegerField()


# --- Views ----------------------------------------------------------------------------------------------


def _venue(request: Request, venue_id: int) -> Venue:
    return access.venue_for(request.user, venue_id, Role.OPERATOR)


def _device(request: Request, venue_id: int, device_id: int) -> CashDevice:
    venue = _venue(request, venue_id)
    return access.get_for_user(
        CashDevice.objects.filter(venue=venue), request.user, Role.OPERATOR, label="cash device", pk=device_id
    )


class DevicesView(HallAPIView):
    @extend_schema(
        operation_id="cashier_devices_list",
        summary="The venue's cash devices (operator)",
        responses={200: CashDeviceSerializer(many=True), **error_responses(403, 404)},
        tags=["cashier devices"],
    )
    def get(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id)
        found = CashDevice.objects.filter(venue=venue).order_by("name")
        return Response(CashDeviceSerializer(found, many=True).data)

    @extend_schema(
        operation_id="cashier_devices_register",
        summary="Register a cash device (operator): its token is shown this once",
        description="409 device_name_taken.",
        request=CashDeviceRequestSerializer,
        responses={201: CashDeviceTokenSerializer, **error_responses(400, 403, 404, 409)},
        tags=["cashier devices"],
    )
    def post(self, request: Request, venue_id: int) -> Response:
        venue = _venue(request, venue_id)
        data = valid(CashDeviceRequestSerializer, request.data)
        device, token = devices.register_device(
            venue_id=venue.pk, name=data["name"], kind=data["kind"], actor=actor(request)
        )
        return Response(
            CashDeviceTokenSerializer({"device": device, "token": token}).data, status=status.HTTP_201_CREATED
        )


class DeviceRotateView(HallAPIView):
    @extend_schema(
        operation_id="cashier_devices_rotate_token",
        summary="Give a cash device a new token; the old one stops working (operator)",
        description="409 device_retired.",
        request=None,
        responses={200: CashDeviceTokenSerializer, **error_responses(403, 404, 409)},
        tags=["cashier devices"],
    )
    def post(self, request: Request, venue_id: int, device_id: int) -> Response:
        device = _device(request, venue_id, device_id)
        token = devices.rotate_token(device=device, actor=actor(request))
        return Response(CashDeviceTokenSerializer({"device": device, "token": token}).data)


class DeviceRetireView(HallAPIView):
    @extend_schema(
        operation_id="cashier_devices_retire",
        summary="Retire a cash device for good: its token stops working (operator)",
        request=None,
        responses={200: CashDeviceSerializer, **error_responses(403, 404)},
        tags=["cashier devices"],
    )
    def post(self, request: Request, venue_id: int, device_id: int) -> Response:
        device = _device(request, venue_id, device_id)
        return Response(CashDeviceSerializer(devices.retire_device(device=device, actor=actor(request))).data)


class NotesInView(APIView):
    authentication_classes = [CashDeviceAuthentication]
    permission_classes = [IsCashDevice]

    @extend_schema(
        operation_id="cashier_device_notes_in",
        summary="A device's bill reader took notes for a player card",
        description=(
            "Authenticate with 'Authorization: CashDevice <id>:<token>'. Idempotent by seq: 201 for a new "
            "message, 200 with the first answer for a retry; the same seq with another card or amount is "
            "409 seq_reused. 400 bad_amount / bad_card_number (naming the field); 404 unknown_card (also a "
            "card of another venue); 409 card_blocked. A refused message writes nothing."
        ),
        request=CashDeviceNotesInSerializer,
        responses={
            201: CashDeviceNotesInResultSerializer,
            200: OpenApiResponse(CashDeviceNotesInResultSerializer, description="A retry: the first answer."),
            400: OpenApiResponse(ErrorSerializer, description="Bad input. Nothing written."),
            401: OpenApiResponse(ErrorSerializer, description="Unknown device or wrong token."),
            404: OpenApiResponse(ErrorSerializer, description="No such card in the device's venue."),
            409: OpenApiResponse(ErrorSerializer, description="Card blocked, or seq reused."),
            429: OpenApiResponse(ErrorSerializer, description="Too many wrong device tokens from here."),
        },
        tags=["cashier devices"],
    )
    def post(self, request: Request) -> Response:
        device = request.auth
        assert isinstance(device, CashDevice)  # IsCashDevice let the request in
        data = valid(CashDeviceNotesInSerializer, request.data)
        answer = devices.notes_in(device=device, seq=data["seq"], card=data["card"], amount=data["amount"])
        return Response(
            answer.result, status=status.HTTP_200_OK if answer.replayed else status.HTTP_201_CREATED
        )


DEVICE = "venues/<int:venue_id>/devices/<int:device_id>/"
urlpatterns = [
    path("venues/<int:venue_id>/devices/", DevicesView.as_view(), name="cashier-devices"),
    path(DEVICE + "rotate-token/", DeviceRotateView.as_view(), name="cashier-device-rotate"),
    path(DEVICE + "retire/", DeviceRetireView.as_view(), name="cashier-device-retire"),
    path("device/notes-in/", NotesInView.as_view(), name="cashier-device-notes-in"),
]
