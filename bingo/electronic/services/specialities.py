"""Specialities (EB-03): created with their first version of rules and a pool per accumulated prize; new
versions take effect from a date, and a game plays the version in force when it was created (so rules change
only between games, EB-02)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from bingo.electronic.models import Speciality, SpecialityPool, SpecialityVersion
from bingo.electronic.prizetable import POOL_TYPES, PrizeSpec, Rules, RulesError, parse_rules, rules_json
from bingo.electronic.services.locks import lock_speciality
from halls import money
from halls.actors import Actor, actor_label
from halls.errors import Conflict, InvalidInput
from halls.models import Room
from halls.services import audit
from jackpots.models import SourceType
from jackpots.services import pools
from jackpots.services.pools import LevelSpec
from jackpots.sources import PoolSource


def checked_rules(data: Any) -> Rules:
    """The rules, or a 400 naming every problem (`bad_rules`)."""
    try:
        return parse_rules(data)
    except RulesError as exc:
        raise InvalidInput(
            _("The speciality's rules are not valid: %(problems)s") % {"problems": "; ".join(exc.problems)},
            code="bad_rules",
            problems=exc.problems,
        ) from None


def _reference(authorisation_ref: Any) -> str:
    ref = str(authorisation_ref or "").strip()
    if not ref or len(ref) > 120:
        raise InvalidInput(
            _("An authorisation reference (1-120 characters) is required."), code="bad_authorisation"
        )
    return ref


def create_speciality(
    *, room: Room, code: str, name: str, rules: Any, authorisation_ref: str, actor: Actor
) -> Speciality:
    """A speciality in `room` (its electronic room), version 1 of its rules in force now, and one pool per
    accumulated prize (seeded, its reserve rate from the prize's reserve_percent)."""
    parsed = checked_rules(rules)
    ref = _reference(authorisation_ref)
    code = str(code).strip()
    if not code or len(code) > 30:
        raise InvalidInput(_("A speciality code has 1-30 characters."), code="bad_code", field="code")
    now = timezone.now()
    with transaction.atomic():
        try:
            with transaction.atomic():
                speciality = Speciality.objects.create(
                    venue_id=room.venue_id,
                    room=room,
                    code=code,
                    name=str(name).strip()[:80] or code,
                    family=str(parsed.family),
                    created_at=now,
                )
        except IntegrityError:
            raise Conflict(
                _("The room already has a speciality, or the venue one with code %(code)s.") % {"code": code},
                code="speciality_taken",
            ) from None
        version = SpecialityVersion.objects.create(
            speciality=speciality,
            number=1,
            rules=rules_json(parsed),
            effective_from=now,
            authorisation_ref=ref,
            created_at=now,
            created_by=actor_label(actor),
        )
        for prize in parsed.prizes:
            if prize.type in POOL_TYPES:
                _new_pool(speciality, prize, ref, actor)
        audit.record(
            venue_id=room.venue_id,
            actor=actor,
            action="electronic.speciality_created",
            obj=speciality,
            data={
                "code": code,
                "room": room.pk,
                "version": version.number,
                "rules": version.rules,
                "ref": ref,
            },
        )
    return speciality


def _new_pool(speciality: Speciality, prize: PrizeSpec, ref: str, actor: Actor) -> SpecialityPool:
    assert prize.pool is not None  # parse_rules: a pool type has its pool
    room = speciality.room
    pool = pools.create_pool(
        name=f"{room.name} · {prize.name}"[:120],
        code=f"E{speciality.pk}-{prize.code}"[:40],
        jurisdiction=room.venue.jurisdiction,
        currency=room.venue.currency,
        authorisation_ref=ref,
        rule_pack="",
        venue=room.venue,
        levels=[
            LevelSpec(
                name=prize.name[:60],
                seed=prize.pool.seed,
                contribution_rate=money.rate(prize.pool.funding_percent, name="funding_percent"),
                reserve_rate=money.rate(prize.pool.reserve_percent, name="reserve_percent"),
                ceiling=prize.pool.ceiling,
            )
        ],
        carousel_bet=None,
        actor=actor,
    )
    pools.add_member(
        pool=pool,
        source_type=SourceType.ESPECIALITY,
        source_id=str(speciality.pk),
        venue=room.venue,
        actor=actor,
    )
    return SpecialityPool.objects.create(speciality=speciality, prize_code=prize.code, pool=pool)


def member_source(speciality: Speciality | int) -> PoolSource:
    """The pools' contribution source of a speciality ("especiality:<id>"; at("egame", id) per game)."""
    speciality_id = speciality if isinstance(speciality, int) else speciality.pk
    return PoolSource.of(SourceType.ESPECIALITY, speciality_id)


def add_version(
    *,
    speciality: Speciality,
    rules: Any,
    effective_from: datetime | None,
    authorisation_ref: str,
    actor: Actor,
) -> SpecialityVersion:
    """A new version of the rules, in force from `effective_from` (now if None; never in the past): the games
    created from then on play it, a game already created keeps its own. The family cannot change; a new pool
    prize gets its pool; a pool prize's pool parameters stay as created (changed through the pool engine)."""
    parsed = checked_rules(rules)
    ref = _reference(authorisation_ref)
    now = timezone.now()
    start = effective_from or now
    if start < now:
        raise InvalidInput(
            _("A new version takes effect now or later, not in the past."), code="bad_effective_from"
        )
    with transaction.atomic():
        speciality = lock_speciality(speciality.pk)
        if str(parsed.family) != speciality.family:
            raise Conflict(
                _("A %(family)s bingo speciality keeps its family.") % {"family": speciality.family},
                code="family_changed",
            )
        last = speciality.versions.order_by("-number").first()
        if last is not None and last.effective_from > start:
            raise Conflict(
                _("Version %(number)s takes effect later; a new version cannot take effect before it.")
                % {"number": last.number},
                code="bad_effective_from",
            )
        version = SpecialityVersion.objects.create(
            speciality=speciality,
            number=(last.number if last else 0) + 1,
            rules=rules_json(parsed),
            effective_from=start,
            authorisation_ref=ref,
            created_at=now,
            created_by=actor_label(actor),
        )
        have = set(speciality.pools.values_list("prize_code", flat=True))
        for prize in parsed.prizes:
            if prize.type in POOL_TYPES and prize.code not in have:
                _new_pool(speciality, prize, ref, actor)
        audit.record(
            venue_id=speciality.venue_id,
            actor=actor,
            action="electronic.version_added",
            obj=speciality,
            data={
                "version": version.number,
                "effective_from": start.isoformat(),
                "rules": version.rules,
                "ref": ref,
            },
        )
    return version


def version_in_force(speciality: Speciality, at: datetime | None = None) -> SpecialityVersion:
    """The version games created at `at` (now) play."""
    at = at or timezone.now()
    version = speciality.versions.filter(effective_from__lte=at).order_by("-number").first()
    if version is None:
        raise Conflict(_("The speciality has no version in force yet."), code="no_version")
    return version


def pool_of(speciality: Speciality, prize_code: str) -> SpecialityPool:
    return SpecialityPool.objects.select_related("pool").get(speciality=speciality, prize_code=prize_code)
