"""Regions, operators, inter-regional agreements and the networks they allow (spec §5 IB-02…IB-04, R-14).

A network of venues spans regions only where, for each pair of its venues' distinct regions, an agreement
is recorded with both documents: the operators' agreement (IB-03) and the administrations' collaboration
protocol (IB-04), signed and valid on the day. `check_network_span` is that rule; joining a network, moving
a member to another region and creating a network pool (jackpots) go through it, and a refusal writes
nothing. The security and reliability certification of OP-18 is external: the agreement row is the
per-pair switch.

Audit: a change is recorded in the chains of the venues it concerns (halls.services.audit is per venue):
a region's or an operator's change in its venues' chains, an agreement's in the chains of the venues of
its two regions, a membership change in the chains of the network's venues. Rows with no venue yet keep
who recorded them and when on the row itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from halls import span
from halls.actors import Actor
from halls.errors import Conflict, InvalidInput
from halls.models import (
    AgreementEnd,
    Jurisdiction,
    Network,
    Operator,
    Region,
    RegionAgreement,
    Venue,
)
from halls.services import audit, locks, venueclock

NO_AGREEMENT = "no_region_agreement"

# What a refusal says is missing from a pair's agreement (the details keep the English keys).
MISSING = {
    "agreement": gettext_lazy("no agreement recorded"),
    "operator_agreement": gettext_lazy("the operators' agreement is not recorded"),
    "administration_protocol": gettext_lazy("the administrations' collaboration protocol is not recorded"),
    "revoked": gettext_lazy("the agreement was revoked"),
    "expired": gettext_lazy("the agreement has expired"),
    "not_yet_valid": gettext_lazy("the agreement is not valid yet"),
}


def _user(actor: Actor) -> User | None:
    return actor if isinstance(actor, User) else None


def _audit(venue_ids: Iterable[int], actor: Actor, action: str, obj: Any, data: dict[str, Any]) -> None:
    """One entry in each venue's chain, in id order (the audit heads' lock order)."""
    for venue_id in sorted(set(venue_ids)):
        audit.record(venue_id=venue_id, actor=actor, action=action, obj=obj, data=data)


def _text(value: str, what: str, code: str, max_length: int) -> str:
    value = (value or "").strip()
    if not value or len(value) > max_length:
        raise InvalidInput(
            _("%(what)s must be non-blank and at most %(n)d characters.") % {"what": what, "n": max_length},
            code=code,
        )
    return value


def _jurisdiction(value: str) -> str:
    if value not in Jurisdiction.values:
        raise InvalidInput(_("Unknown jurisdiction %(value)r.") % {"value": value}, code="bad_jurisdiction")
    return value


# --- regions and operators -------------------------------------------------------------------------------


def create_region(*, code: str, name: str, jurisdiction: str, actor: Actor) -> Region:
    code = _text(code, _("The region's code"), "bad_region", 20).upper()
    name = _text(name, _("The region's name"), "bad_region", 120)
    try:
        with transaction.atomic():
            return Region.objects.create(code=code, name=name, jurisdiction=_jurisdiction(jurisdiction))
    except IntegrityError as exc:
        raise Conflict(
            _("A region with code %(code)s exists.") % {"code": code}, code="region_code_taken"
        ) from exc


def update_region(
    *, region: Region, actor: Actor, name: str | None = None, jurisdiction: str | None = None
) -> Region:
    """Rename a region, or change its jurisdiction while no venue is in it (its venues follow its rules)."""
    with transaction.atomic():
        region = locks.lock_region(region.pk)
        new: dict[str, str] = {}
        if name is not None and name.strip() != region.name:
            new["name"] = _text(name, _("The region's name"), "bad_region", 120)
        if jurisdiction is not None and jurisdiction != region.jurisdiction:
            if region.venues.exists():
                raise Conflict(
                    _("The jurisdiction of %(region)s changes only while no venue is in it.")
                    % {"region": region},
                    code="region_in_use",
                )
            new["jurisdiction"] = _jurisdiction(jurisdiction)
        if not new:
            return region
        old = {field: getattr(region, field) for field in new}
        for field, value in new.items():
            setattr(region, field, value)
        region.save(update_fields=list(new))
        venue_ids = region.venues.values_list("pk", flat=True)
        _audit(venue_ids, actor, "region.changed", region, {"code": region.code, "old": old, "new": new})
    return region


def create_operator(*, name: str, tax_id: str, actor: Actor) -> Operator:
    name = _text(name, _("The operator's name"), "bad_operator", 160)
    tax_id = _text(tax_id, _("The operator's tax id"), "bad_operator", 20).upper().replace(" ", "")
    if not tax_id.isalnum():
        raise InvalidInput(
            _("The tax id %(tax_id)s has only letters and digits.") % {"tax_id": tax_id}, code="bad_tax_id"
        )
    try:
        with transaction.atomic():
            return Operator.objects.create(name=name, tax_id=tax_id)
    except IntegrityError as exc:
        raise Conflict(
            _("An operator with tax id %(tax_id)s exists.") % {"tax_id": tax_id}, code="operator_taken"
        ) from exc


def update_operator(*, operator: Operator, name: str, actor: Actor) -> Operator:
    name = _text(name, _("The operator's name"), "bad_operator", 160)
    with transaction.atomic():
        operator = locks.lock_operator(operator.pk)
        if name == operator.name:
            return operator
        old = operator.name
        operator.name = name
        operator.save(update_fields=["name"])
        venue_ids = operator.venues.values_list("pk", flat=True)
        data = {"tax_id": operator.tax_id, "old": {"name": old}, "new": {"name": name}}
        _audit(venue_ids, actor, "operator.changed", operator, data)
    return operator


def assign_venue(
    *, venue: Venue, actor: Actor, region: Region | None = None, operator: Operator | None = None
) -> Venue:
    """Place a venue in a region and/or under an operator (None keeps the current one).

    The region's jurisdiction must be the venue's: the region is locked before it is read (rank order:
    the venue, its networks, the region, then the agreements the span relies on), so a concurrent
    `update_region` either changed it before (the move is checked against the new jurisdiction) or waits
    and then finds the venue in it. Moving a venue that belongs to networks re-checks each network's span
    with the venue in its new region: refused (nothing written) where a pair lacks a valid agreement."""
    with transaction.atomic():
        venue = locks.lock_venue(venue.pk)
        network_ids = list(Network.objects.filter(venues=venue.pk).values_list("pk", flat=True))
        networks = locks.lock_networks(network_ids)
        new: dict[str, Any] = {}
        if region is not None and region.pk != venue.region_id:
            region = locks.lock_region(region.pk)  # its jurisdiction as in force now, and held till commit
            if region.jurisdiction != venue.jurisdiction:
                raise InvalidInput(
                    _("%(venue)s is a %(venue_j)s venue; region %(region)s is %(region_j)s.")
                    % {
                        "venue": venue,
                        "venue_j": venue.jurisdiction,
                        "region": region.code,
                        "region_j": region.jurisdiction,
                    },
                    code="region_jurisdiction",
                )
            new["region"] = region
        if operator is not None and operator.pk != venue.operator_id:
            new["operator"] = operator
        if not new:
            return venue
        old = {"region": _code(venue.region), "operator": _tax_id(venue.operator)}
        for field, value in new.items():
            setattr(venue, field, value)
        if "region" in new:
            for network in networks:
                others = [v for v in network.venues.select_related("region") if v.pk != venue.pk]
                check_network_span(network=network, venues=[*others, venue])
        venue.save(update_fields=list(new))
        data = {
            "old": old,
            "new": {"region": _code(venue.region), "operator": _tax_id(venue.operator)},
        }
        audit.record(venue_id=venue.pk, actor=actor, action="venue.region_assigned", obj=venue, data=data)
    return venue


def _code(region: Region | None) -> str | None:
    return None if region is None else region.code


def _tax_id(operator: Operator | None) -> str | None:
    return None if operator is None else operator.tax_id


# --- agreements ------------------------------------------------------------------------------------------


def _ordered(region_1: Region, region_2: Region) -> tuple[Region, Region]:
    if region_1.pk == region_2.pk:
        raise InvalidInput(
            _("A region needs no agreement with itself (%(region)s).") % {"region": region_1.code},
            code="same_region",
        )
    return (region_1, region_2) if region_1.pk < region_2.pk else (region_2, region_1)


def _document(ref: str, signed_on: date | None, what: str, today: date) -> tuple[str, date | None]:
    ref = (ref or "").strip()
    if bool(ref) != (signed_on is not None):
        raise InvalidInput(
            _("%(what)s needs both its reference and its signing date.") % {"what": what},
            code="incomplete_document",
        )
    if len(ref) > 120:
        raise InvalidInput(_("%(what)s: the reference is too long.") % {"what": what}, code="bad_document")
    if signed_on is not None and signed_on > today:
        raise InvalidInput(
            _("%(what)s cannot be signed after today.") % {"what": what}, code="signed_in_future"
        )
    return ref, signed_on


def _venue_ids_of(*regions: Region) -> list[int]:
    return list(Venue.objects.filter(region__in=[r.pk for r in regions]).values_list("pk", flat=True))


def describe_agreement(agreement: RegionAgreement) -> dict[str, Any]:
    """What the audit records of an agreement (and the API shows)."""
    return {
        "regions": [agreement.region_a.code, agreement.region_b.code],
        "operator_agreement_ref": agreement.operator_agreement_ref,
        "operator_agreement_signed_on": agreement.operator_agreement_signed_on,
        "operators": sorted(agreement.operators.values_list("tax_id", flat=True)),
        "protocol_ref": agreement.protocol_ref,
        "protocol_signed_on": agreement.protocol_signed_on,
        "valid_from": agreement.valid_from,
        "valid_until": agreement.valid_until,
    }


def record_agreement(
    *,
    regions: tuple[Region, Region],
    actor: Actor,
    valid_from: date,
    valid_until: date | None = None,
    operator_agreement_ref: str = "",
    operator_agreement_signed_on: date | None = None,
    operators: Sequence[Operator] = (),
    protocol_ref: str = "",
    protocol_signed_on: date | None = None,
) -> RegionAgreement:
    """Record the agreement of a pair of regions (either document may follow later,
    `record_agreement_documents`). A pair has one open agreement at a time: an open one that has expired
    is ended here (audited as expired); one still valid or not yet valid must be revoked first."""
    region_a, region_b = _ordered(*regions)
    today = timezone.localdate()
    op = _document(operator_agreement_ref, operator_agreement_signed_on, _("The operators' agreement"), today)
    protocol = _document(protocol_ref, protocol_signed_on, _("The collaboration protocol"), today)
    if valid_until is not None and valid_until < valid_from:
        raise InvalidInput(_("The agreement ends before it starts."), code="bad_period")
    if op[0] and not operators:
        raise InvalidInput(
            _("The operators' agreement names the operators who signed it."), code="operators_required"
        )
    with transaction.atomic():
        venue_ids = _venue_ids_of(region_a, region_b)
        current = _open_agreement(region_a, region_b)
        if current is not None:
            locks.lock_agreements([current.pk])
            current.refresh_from_db()
            if current.valid_until is None or current.valid_until >= today:
                raise Conflict(
                    _("Regions %(a)s and %(b)s have an agreement (%(ref)s); revoke it first.")
                    % {"a": region_a.code, "b": region_b.code, "ref": current.operator_agreement_ref or "—"},
                    code="agreement_exists",
                    agreement=current.pk,
                )
            _end(current, AgreementEnd.EXPIRED, actor, _("replaced by a new agreement"), venue_ids)
        agreement = RegionAgreement.objects.create(
            region_a=region_a,
            region_b=region_b,
            operator_agreement_ref=op[0],
            operator_agreement_signed_on=op[1],
            protocol_ref=protocol[0],
            protocol_signed_on=protocol[1],
            valid_from=valid_from,
            valid_until=valid_until,
            recorded_at=timezone.now(),
            recorded_by=_user(actor),
        )
        agreement.operators.set(operators)
        _audit(venue_ids, actor, "region_agreement.recorded", agreement, describe_agreement(agreement))
    return agreement


def record_agreement_documents(
    *,
    agreement: RegionAgreement,
    actor: Actor,
    operator_agreement_ref: str = "",
    operator_agreement_signed_on: date | None = None,
    operators: Sequence[Operator] = (),
    protocol_ref: str = "",
    protocol_signed_on: date | None = None,
) -> RegionAgreement:
    """Add a document the agreement lacks (a recorded document is never rewritten: revoke and record anew)."""
    today = timezone.localdate()
    op = _document(operator_agreement_ref, operator_agreement_signed_on, _("The operators' agreement"), today)
    protocol = _document(protocol_ref, protocol_signed_on, _("The collaboration protocol"), today)
    with transaction.atomic():
        (agreement,) = locks.lock_agreements([agreement.pk])
        if agreement.ended_at is not None:
            raise Conflict(_("The agreement has ended."), code="agreement_ended")
        new: dict[str, Any] = {}
        for (ref, signed), (ref_field, signed_field) in (
            (op, ("operator_agreement_ref", "operator_agreement_signed_on")),
            (protocol, ("protocol_ref", "protocol_signed_on")),
        ):
            if not ref:
                continue
            if getattr(agreement, ref_field):
                raise Conflict(
                    _("That document is recorded already (%(ref)s).")
                    % {"ref": getattr(agreement, ref_field)},
                    code="document_recorded",
                )
            new[ref_field], new[signed_field] = ref, signed
        if "operator_agreement_ref" in new and not (operators or agreement.operators.exists()):
            raise InvalidInput(
                _("The operators' agreement names the operators who signed it."), code="operators_required"
            )
        if not new:
            raise InvalidInput(_("No document given."), code="no_document")
        for field, value in new.items():
            setattr(agreement, field, value)
        agreement.save(update_fields=list(new))
        if operators:
            agreement.operators.add(*operators)
        venue_ids = _venue_ids_of(agreement.region_a, agreement.region_b)
        data = describe_agreement(agreement)
        _audit(venue_ids, actor, "region_agreement.documents_recorded", agreement, data)
    return agreement


def revoke_agreement(*, agreement: RegionAgreement, actor: Actor, note: str = "") -> RegionAgreement:
    """End an agreement now. Networks that spanned the pair are out of span from now on
    (`networks_out_of_span`); the audit entry names them."""
    with transaction.atomic():
        (agreement,) = locks.lock_agreements([agreement.pk])
        if agreement.ended_at is not None:
            raise Conflict(_("The agreement has ended already."), code="agreement_ended")
        venue_ids = _venue_ids_of(agreement.region_a, agreement.region_b)
        _end(agreement, AgreementEnd.REVOKED, actor, note.strip()[:240], venue_ids)
    return agreement


def _end(agreement: RegionAgreement, kind: str, actor: Actor, note: str, venue_ids: list[int]) -> None:
    agreement.ended_at = timezone.now()
    agreement.ended_as = kind
    agreement.ended_by = _user(actor)
    agreement.end_note = note
    agreement.save(update_fields=["ended_at", "ended_as", "ended_by", "end_note"])
    pair = {agreement.region_a_id, agreement.region_b_id}
    affected = sorted(
        network.code
        for network in Network.objects.filter(venues__region__in=pair).distinct()
        if pair <= set(network.venues.exclude(region=None).values_list("region_id", flat=True))
    )
    data = {**describe_agreement(agreement), "note": note, "networks_affected": affected}
    _audit(venue_ids, actor, f"region_agreement.{kind}", agreement, data)


def _open_agreement(region_a: Region, region_b: Region) -> RegionAgreement | None:
    return RegionAgreement.objects.filter(region_a=region_a, region_b=region_b, ended_at=None).first()


# --- the span rule ---------------------------------------------------------------------------------------


def check_network_span(*, network: Network | None, venues: Iterable[Venue], on: date | None = None) -> None:
    """Refuse unless every pair of the venues' distinct regions has an agreement valid ``on`` (by default
    each venue's today, on its clock and in its time zone: halls.services.venueclock, the real date in
    production; a lab's venue moved forward is judged at its own date): both documents recorded and signed,
    within its period, not ended. Raises a Conflict with code ``no_region_agreement`` naming the first pair
    lacking one (by region code) and what it lacks.

    Inside a transaction the agreements relied on are locked (a revocation waits for the caller's commit).
    Venues without a region span nothing (they are not placed yet)."""
    placed = [v for v in venues if v.region_id is not None]
    region_ids = {v.region_id for v in placed}
    if len(region_ids) < 2:
        return
    days = [on] if on is not None else sorted({venueclock.today(v) for v in placed})
    regions = {r.pk: r for r in Region.objects.filter(pk__in=region_ids)}
    agreements = RegionAgreement.objects.filter(
        region_a__in=region_ids, region_b__in=region_ids, ended_at=None
    ).order_by("pk")
    if transaction.get_connection().in_atomic_block and connection.features.has_select_for_update:
        found = locks.lock_agreements(list(agreements.values_list("pk", flat=True)))
    else:
        found = list(agreements)
    by_pair = {(a.region_a_id, a.region_b_id): a for a in found}
    for day in days:
        _check_span_on(network, regions, by_pair, day)


def _check_span_on(
    network: Network | None,
    regions: dict[int, Region],
    by_pair: dict[tuple[int, int], RegionAgreement],
    day: date,
) -> None:
    def covered(a: Region, b: Region) -> bool:
        agreement = by_pair.get(_pair(a, b))
        return agreement is not None and not agreement.missing_on(day)

    pair = span.first_uncovered(regions.values(), covered, key=lambda r: r.code)
    if pair is None:
        return
    a, b = pair
    missing = _missing(by_pair.get(_pair(a, b)), a, b, day)
    where = _(" in network %(network)s") % {"network": network.code} if network is not None else ""
    raise Conflict(
        _("Regions %(a)s and %(b)s have no valid agreement%(where)s: %(missing)s.")
        % {"a": a.code, "b": b.code, "where": where, "missing": "; ".join(str(MISSING[m]) for m in missing)},
        code=NO_AGREEMENT,
        regions=[a.code, b.code],
        missing=missing,
        network=None if network is None else network.code,
    )


def _pair(a: Region, b: Region) -> tuple[int, int]:
    return (a.pk, b.pk) if a.pk < b.pk else (b.pk, a.pk)


def _missing(agreement: RegionAgreement | None, a: Region, b: Region, day: date) -> list[str]:
    if agreement is not None:
        return agreement.missing_on(day)
    ids = _pair(a, b)
    last = (
        RegionAgreement.objects.filter(region_a_id=ids[0], region_b_id=ids[1])
        .exclude(ended_at=None)
        .order_by("-ended_at")
        .first()
    )
    return [str(last.ended_as)] if last is not None else ["agreement"]


def agreement_valid(region_1: Region, region_2: Region, on: date | None = None) -> bool:
    """Whether the pair has a valid agreement ``on`` (today); a region with itself always has."""
    if region_1.pk == region_2.pk:
        return True
    a, b = _pair(region_1, region_2)
    agreement = RegionAgreement.objects.filter(region_a_id=a, region_b_id=b, ended_at=None).first()
    return agreement is not None and not agreement.missing_on(on or timezone.localdate())


def networks_out_of_span(on: date | None = None) -> list[tuple[Network, list[str]]]:
    """Networks whose members span a pair without a valid agreement now (after a revocation or an
    expiry), each with the pair's region codes: for the operator's page."""
    found = []
    for network in Network.objects.prefetch_related("venues").order_by("code"):
        try:
            check_network_span(network=network, venues=network.venues.all(), on=on)
        except Conflict as exc:
            found.append((network, list(exc.details["regions"])))
    return found


# --- membership ------------------------------------------------------------------------------------------


def join_network(*, network: Network, venue: Venue, actor: Actor) -> Network:
    """Add a venue to a network: refused (nothing written) when the network's venues with this one span a
    region pair without a valid agreement. Joining twice changes nothing."""
    with transaction.atomic():
        (network,) = locks.lock_networks([network.pk])
        members = list(network.venues.select_related("region").order_by("pk"))
        if any(v.pk == venue.pk for v in members):
            return network
        venue = Venue.objects.select_related("region").get(pk=venue.pk)
        check_network_span(network=network, venues=[*members, venue])
        network.venues.add(venue)
        data = _membership(network, venue, [*members, venue])
        _audit([v.pk for v in members] + [venue.pk], actor, "network.venue_joined", network, data)
    return network


def leave_network(*, network: Network, venue: Venue, actor: Actor) -> Network:
    """Take a venue out of a network (leaving never widens the span). Leaving twice changes nothing."""
    with transaction.atomic():
        (network,) = locks.lock_networks([network.pk])
        members = list(network.venues.select_related("region").order_by("pk"))
        if not any(v.pk == venue.pk for v in members):
            return network
        network.venues.remove(venue.pk)
        venue = next(v for v in members if v.pk == venue.pk)
        data = _membership(network, venue, [v for v in members if v.pk != venue.pk])
        _audit([v.pk for v in members], actor, "network.venue_left", network, data)
    return network


def _membership(network: Network, venue: Venue, members: list[Venue]) -> dict[str, Any]:
    return {
        "network": network.code,
        "venue": venue.licence_number,
        "region": _code(venue.region),
        "members": [v.licence_number for v in members],
        "regions": sorted({r.code for v in members if (r := v.region) is not None}),
    }
