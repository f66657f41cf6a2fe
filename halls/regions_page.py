"""The operator's regions page: regions and their venues, the agreements between regions and whether each
is valid today, and every network with its members' regions (a network spanning a pair without a valid
agreement is flagged). Read-only: changes go through the regions API (halls.regions_api)."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext
from django.views.decorators.cache import never_cache

from halls import access
from halls.models import Network, Region, RegionAgreement, Role, Venue
from halls.services import regions


@dataclass(frozen=True)
class AgreementRow:
    agreement: RegionAgreement
    missing: list[str]
    missing_text: list[str]


@dataclass(frozen=True)
class NetworkRow:
    network: Network
    members: list[Venue]
    regions: list[str]
    uncovered: list[str]  # the first pair lacking a valid agreement, or empty


@login_required
@never_cache
def regions_page(request: HttpRequest) -> HttpResponse:
    user = request.user
    if not any(Role.OPERATOR in held for _, held in access.roles_in_each(user)):  # one query
        raise PermissionDenied(gettext("The regions page is for operators."))
    today = timezone.localdate()
    agreements = [
        AgreementRow(a, a.missing_on(today), [str(regions.MISSING[m]) for m in a.missing_on(today)])
        for a in RegionAgreement.objects.select_related("region_a", "region_b")
        .prefetch_related("operators")
        .order_by("-ended_at", "region_a__code", "region_b__code", "-pk")
    ]
    out = dict((n.pk, pair) for n, pair in regions.networks_out_of_span())  # each venue at its own date
    networks = []
    for network in Network.objects.prefetch_related("venues__region", "venues__operator").order_by("code"):
        members = sorted(network.venues.all(), key=lambda v: v.name)
        codes = sorted({v.region.code for v in members if v.region is not None})
        networks.append(NetworkRow(network, members, codes, out.get(network.pk, [])))
    context = {
        "regions": Region.objects.prefetch_related("venues").order_by("code"),
        "agreements": agreements,
        "networks": networks,
        "unplaced": Venue.objects.filter(region=None).order_by("name"),
        "today": today,
    }
    return render(request, "halls/regions.html", context)
