"""The operator's admin: venue configuration is edited here, its prize settings through their service (a
page of their own); the audit chain is read-only."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, cast

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from halls.errors import DomainError
from halls.foureyes import kind_named
from halls.models import (
    AuditEntry,
    GameSession,
    HallCategory,
    Network,
    Operator,
    Proposal,
    Region,
    RegionAgreement,
    Room,
    Screen,
    StaffRole,
    Venue,
)
from halls.services import proposals, voice
from halls.services.venues import PRIZE_SETTINGS_KIND
from halls.services.verify import verify_audit


class ReadOnlyAdmin(admin.ModelAdmin[Any]):
    """Records that only services write: visible to the operator, never edited by hand."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class RoomInline(admin.TabularInline[Any, Any]):
    model = Room
    extra = 0
    # The caller's voice changes through halls.services.voice (the console, the API): audited and told live.
    readonly_fields = ("voice_muted", "voice_volume")


class StaffRoleInline(admin.TabularInline[Any, Any]):
    model = StaffRole
    extra = 0


class PrizeSettingsForm(forms.Form):
    line_percent = forms.DecimalField(
        label=_("Line prize, percent of sales"), max_digits=5, decimal_places=2, min_value=Decimal(0)
    )
    bingo_percent = forms.DecimalField(
        label=_("Bingo prize, percent of sales"), max_digits=5, decimal_places=2, min_value=Decimal(0)
    )
    hall_category = forms.ChoiceField(label=_("Hall category"), choices=HallCategory.choices)


@admin.register(Venue)
class VenueAdmin(admin.ModelAdmin[Any]):
    list_display = (
        "name",
        "licence_number",
        "jurisdiction",
        "hall_category",
        "time_zone",
        "currency",
        "language",
    )
    # Money-deciding, changed only on their own page through halls.services.venues (audited, between games).
    PRIZE_SETTINGS = ("line_percent", "bingo_percent", "hall_category")
    PLACE = ("region", "operator")
    inlines = [RoomInline, StaffRoleInline]
    actions = ["verify_audit"]

    def get_readonly_fields(self, request: HttpRequest, obj: Venue | None = None) -> tuple[str, ...]:
        if obj is None:
            return (*self.PRIZE_SETTINGS, "change_prize_settings", *self.PLACE)
        # A venue's jurisdiction (its rules) and currency are set when it is created, never edited; its
        # region and operator are assigned through halls.services.regions (the operator's regions page).
        return (*self.PRIZE_SETTINGS, "change_prize_settings", "jurisdiction", "currency", *self.PLACE)

    @admin.display(description=_("Prize settings"))
    def change_prize_settings(self, venue: Venue) -> str:
        if venue.pk is None:
            return gettext("Set once the venue is saved.")
        url = reverse("admin:halls_venue_prize_settings", args=[venue.pk])
        return format_html('<a href="{}">{}</a>', url, gettext("Change the prize settings"))

    def get_urls(self) -> list[URLPattern]:
        own = path(
            "<int:venue_id>/prize-settings/",
            self.admin_site.admin_view(self.prize_settings_view),
            name="halls_venue_prize_settings",
        )
        return [own, *super().get_urls()]

    def prize_settings_view(self, request: HttpRequest, venue_id: int) -> HttpResponse:
        """The Line and Bingo percentages and the hall category: proposed here (four eyes, kind
        ``venue.prize_settings``), changed through their service when a second operator approves it
        (refused at the approval while a game of the venue is in play); a bad form writes nothing."""
        venue = get_object_or_404(Venue, pk=venue_id)
        if not self.has_change_permission(request, venue):
            raise PermissionDenied
        if request.method == "POST":
            form = PrizeSettingsForm(request.POST)
            if form.is_valid():
                data = form.cleaned_data
                try:
                    proposal = proposals.propose(
                        venue=venue,
                        kind=PRIZE_SETTINGS_KIND,
                        target=f"venue:{venue.pk}",
                        params={name: str(value) for name, value in data.items() if value is not None},
                        actor=cast(User, request.user),
                    )
                except DomainError as exc:
                    form.add_error(None, exc.message)
                else:
                    self.message_user(
                        request,
                        gettext(
                            "The change of the prize settings of %(venue)s is proposed (no. %(id)s): a "
                            "second operator approves it with their own password."
                        )
                        % {"venue": venue.name, "id": proposal.pk},
                    )
                    return redirect("admin:halls_venue_change", venue.pk)
        else:
            form = PrizeSettingsForm(initial={name: getattr(venue, name) for name in self.PRIZE_SETTINGS})
        context = {
            **self.admin_site.each_context(request),
            "title": gettext("Prize settings of %s") % venue.name,
            "opts": self.model._meta,
            "venue": venue,
            "form": form,
        }
        return TemplateResponse(request, "admin/halls/venue/prize_settings.html", context)

    @admin.action(description=_("Verify the audit chain and the pools' seals"))
    def verify_audit(self, request: HttpRequest, queryset: QuerySet[Venue]) -> None:
        report = verify_audit(venue_ids=list(queryset.order_by("pk").values_list("pk", flat=True)))
        for chain in report.chains:
            if chain.ok:
                text = gettext("%(kind)s %(name)s: intact, %(length)d links verified.")
                self.message_user(
                    request, text % {"kind": chain.kind, "name": chain.name, "length": chain.length}
                )
            else:
                text = gettext("%(kind)s %(name)s: NOT intact, first bad link %(seq)s: %(reason)s")
                values = {
                    "kind": chain.kind,
                    "name": chain.name,
                    "seq": chain.first_bad_seq,
                    "reason": chain.reason,
                }
                self.message_user(request, text % values, level=messages.ERROR)


@admin.register(Screen)
class ScreenAdmin(admin.ModelAdmin[Any]):
    list_display = ("name", "venue", "room", "active", "plays_audio", "token")
    # The audio screen is chosen through halls.services.voice (one per room, audited, told to the screens).
    readonly_fields = ("token", "plays_audio")
    actions = ["make_audio_screen"]

    @admin.action(description=_("Make it its room's audio screen (the caller's voice)"))
    def make_audio_screen(self, request: HttpRequest, queryset: QuerySet[Screen]) -> None:
        for screen in queryset.select_related("room").order_by("pk"):
            try:
                voice.choose_audio_screen(room=screen.room, screen=screen, actor=cast(User, request.user))
            except DomainError as exc:
                self.message_user(request, exc.message, level=messages.ERROR)
            else:
                text = gettext("%(screen)s now plays the voice of %(room)s.")
                self.message_user(request, text % {"screen": screen.name, "room": screen.room.name})


@admin.register(GameSession)
class GameSessionAdmin(ReadOnlyAdmin):
    list_display = ("pk", "room", "opened_at", "opened_by", "closed_at")


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "venue", "actor_label", "action", "object_type", "object_id")
    list_filter = ("venue", "action")
    search_fields = ("object_id", "action")


@admin.register(Network)
class NetworkAdmin(admin.ModelAdmin[Network]):
    """Networks of linked venues: their names here; their members join and leave through
    halls.services.regions (the span rule, audited), on the regions page or the API."""

    list_display = ("code", "name", "jurisdiction", "members")
    readonly_fields = ("venues",)

    @admin.display(description=_("Venues"))
    def members(self, network: Network) -> str:
        return ", ".join(
            f"{v.name} ({v.region.code if v.region else '—'})"
            for v in network.venues.select_related("region")
        )


@admin.register(Region)
class RegionAdmin(ReadOnlyAdmin):
    list_display = ("code", "name", "jurisdiction")


@admin.register(Operator)
class OperatorAdmin(ReadOnlyAdmin):
    list_display = ("name", "tax_id")


@admin.register(RegionAgreement)
class RegionAgreementAdmin(ReadOnlyAdmin):
    list_display = (
        "region_a",
        "region_b",
        "operator_agreement_ref",
        "protocol_ref",
        "valid_from",
        "valid_until",
        "ended_as",
    )


class DecisionForm(forms.Form):
    """The second person's decision on a proposal, in the admin: their own password, typed now."""

    username = forms.CharField(
        label=_("Second person (if not you)"), required=False, max_length=150, strip=True
    )
    password = forms.CharField(label=_("Their password"), widget=forms.PasswordInput, strip=False)
    posted_digest = forms.CharField(label=_("Digest on the posted sheet"), required=False, max_length=300)
    reason = forms.CharField(label=_("Why (a rejection)"), required=False, max_length=500)


@admin.register(Proposal)
class ProposalAdmin(ReadOnlyAdmin):
    """Four-eyes proposals (halls.services.proposals): read-only rows; the actions approve or reject ONE
    proposal, asking for the deciding person's password (checked by the service in that call)."""

    list_display = (
        "pk",
        "venue",
        "kind",
        "target",
        "status",
        "proposed_by",
        "proposed_at",
        "expires_at",
        "decided_by",
        "decided_at",
    )
    list_filter = ("status", "kind", "venue")
    actions = ["approve_proposal", "reject_proposal"]

    def _decide(
        self, request: HttpRequest, queryset: QuerySet[Proposal], decision: str
    ) -> HttpResponse | None:
        if queryset.count() != 1:
            self.message_user(
                request, gettext("Choose exactly one proposal to decide on."), level=messages.ERROR
            )
            return None
        proposal = queryset.get()
        form = DecisionForm(request.POST if "decide" in request.POST else None)
        if form.is_valid():
            data = form.cleaned_data
            try:
                who = proposals.decider(current=cast(User, request.user), username=data["username"])
                if decision == "approve":
                    proposals.approve(
                        proposal=proposal,
                        approver=who,
                        password=data["password"],
                        posted_digest=data["posted_digest"],
                        client=request,
                    )
                    text = gettext("Proposal %(pk)s approved: the change is applied.")
                else:
                    proposals.reject(
                        proposal=proposal,
                        decider=who,
                        password=data["password"],
                        reason=data["reason"],
                        client=request,
                    )
                    text = gettext("Proposal %(pk)s rejected: nothing changed.")
            except DomainError as exc:
                form.add_error(None, exc.message)
            else:
                self.message_user(request, text % {"pk": proposal.pk})
                return None
        context = {
            **self.admin_site.each_context(request),
            "title": gettext("Approve proposal %(pk)s") % {"pk": proposal.pk}
            if decision == "approve"
            else gettext("Reject proposal %(pk)s") % {"pk": proposal.pk},
            "opts": self.model._meta,
            "proposal": proposal,
            # A posted kind's approver reads the digest on the sheet on the wall: not shown here.
            "posts_sheet": bool((kind := kind_named(proposal.kind)) and kind.posted),
            "form": form,
            "action": f"{decision}_proposal",
            "action_checkbox_name": ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/halls/proposal/decide.html", context)

    @admin.action(description=_("Approve the proposal (a second person, with their password)"))
    def approve_proposal(self, request: HttpRequest, queryset: QuerySet[Proposal]) -> HttpResponse | None:
        return self._decide(request, queryset, "approve")

    @admin.action(description=_("Reject the proposal (with the password)"))
    def reject_proposal(self, request: HttpRequest, queryset: QuerySet[Proposal]) -> HttpResponse | None:
        return self._decide(request, queryset, "reject")
