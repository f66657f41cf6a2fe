"""Pools: creation with levels, members, parameter changes (only while nothing is in play), corrections."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from halls import money
from halls.actors import Actor, actor_label
from halls.errors import Conflict, InvalidInput, NotFound
from halls.eventtypes import (
    Correction,
    EventType,
    Membership,
    ParametersChange,
    PoolCorrected,
    PoolCreated,
    PoolDescription,
    PoolMembersChanged,
    PoolParametersChanged,
)
from halls.models import Network, Venue
from halls.services import regions
from jackpots.models import (
    LedgerMove,
    LevelKind,
    MoveKind,
    OverflowTo,
    ParameterChange,
    Pool,
    PoolLevel,
    PoolMember,
    SourceType,
)
from jackpots.rulepacks import PACKS, JackpotKind, MultipleOfBet, RulePack
from jackpots.services import locks, notify, sources
from jackpots.services.amounts import as_decimal, cents, display, meter_amount
from jackpots.services.auditing import record
from jackpots.services.folding import fold_locked
from jackpots.services.guards import open_play_problems
from jackpots.services.levels import draw_must_hit_by
from jackpots.services.locks import lock_levels
from jackpots.services.packs import with_authorised_paytable

# Rule packs whose pools may link venues of a network (spec §6.12: blackjack progressives across
# establishments, ML art. 18.2, with prior authorisation). Pools without a rule pack (machines, bingo
# programs) carry their own rules and authorisation; their apps decide.
NETWORK_PACKS = frozenset({"ML_BJ_PROGRESIVO"})

# Parameters change_parameters accepts; `must_hit_by` is never set directly (it is drawn, and secret).
CHANGEABLE = ("name", "seed", "contribution_rate", "reserve_rate", "ceiling", "overflow_to", "mystery")


@dataclass(frozen=True)
class LevelSpec:
    """One level of a new pool. Rates are fractions of the bet (Decimal("0.05") = 5 %)."""

    name: str
    seed: Decimal
    contribution_rate: Decimal
    reserve_rate: Decimal = Decimal(0)
    ceiling: Decimal | None = None
    overflow_to: str = OverflowTo.RESERVE
    mystery: bool = False  # draw a secret must-hit-by value between seed and ceiling at every (re)seed
    kind: str | None = None  # default: the rule pack's kind (progressive without a pack)
    initial_reserve: Decimal = Decimal(0)


def _rate(name: str, value: Any) -> Decimal:
    rate = as_decimal(name, value, code="bad_rate")
    if rate < 0 or rate > 1 or rate != rate.quantize(money.METER_QUANTUM):
        raise InvalidInput(
            _("%(name)s must be a fraction from 0 to 1 with at most 6 decimals, got %(rate)s.")
            % {"name": name, "rate": rate},
            code="bad_rate",
        )
    return rate


def _check_rates(contribution_rate: Decimal, reserve_rate: Decimal) -> None:
    if contribution_rate + reserve_rate > 1:
        raise InvalidInput(
            _("contribution_rate + reserve_rate is %(total_rate)s: at most the whole bet.")
            % {"total_rate": contribution_rate + reserve_rate},
            code="bad_rate",
        )


def _check_seed(pack: RulePack | None, seed: Decimal, bet: Decimal | None, level_name: str) -> None:
    if pack is None or pack.min_seed_multiple is None:
        return
    assert bet is not None
    floor = pack.minimum_seed(bet)
    if seed < floor:
        raise InvalidInput(
            _(
                "Level %(level_name)s: the seed %(seed)s is below the minimum "
                "%(floor)s of %(code)s (%(min_seed_multiple)s × the pool bet %(bet)s)."
            )
            % {
                "level_name": level_name,
                "seed": seed,
                "floor": floor,
                "code": pack.code,
                "min_seed_multiple": pack.min_seed_multiple,
                "bet": bet,
            },
            code="seed_below_minimum",
            minimum=str(floor),
        )


def _check_ceiling(seed: Decimal, ceiling: Decimal | None, level_name: str) -> None:
    if ceiling is not None and ceiling < seed:
        raise InvalidInput(
            _("Level %(level_name)s: the ceiling %(ceiling)s is below the seed %(seed)s.")
            % {"level_name": level_name, "ceiling": ceiling, "seed": seed},
            code="bad_ceiling",
        )


@dataclass(frozen=True)
class _Level:
    spec: LevelSpec
    seed: Decimal
    contribution_rate: Decimal
    reserve_rate: Decimal
    ceiling: Decimal | None
    kind: str
    initial_reserve: Decimal


def _checked_levels(pack: RulePack | None, levels: Sequence[LevelSpec], bet: Decimal | None) -> list[_Level]:
    if not levels:
        raise InvalidInput(_("A pool needs at least one level."), code="no_levels")
    names = [spec.name for spec in levels]
    if len(set(names)) != len(names) or not all(name.strip() for name in names):
        raise InvalidInput(_("Each level needs its own, non-blank name."), code="bad_level_name")
    checked = []
    for position, spec in enumerate(levels):
        seed = meter_amount("seed", spec.seed, code="bad_seed")
        contribution_rate = _rate("contribution_rate", spec.contribution_rate)
        reserve_rate = _rate("reserve_rate", spec.reserve_rate)
        _check_rates(contribution_rate, reserve_rate)
        ceiling = None if spec.ceiling is None else meter_amount("ceiling", spec.ceiling, code="bad_ceiling")
        _check_ceiling(seed, ceiling, spec.name)
        _check_seed(pack, seed, bet, spec.name)
        kind = spec.kind or (pack.kind.value if pack else JackpotKind.PROGRESSIVE.value)
        if kind not in LevelKind.values:
            raise InvalidInput(
                _("Level %(name)s: unknown kind %(kind)r.") % {"name": spec.name, "kind": kind},
                code="bad_kind",
            )
        if pack is not None and pack.kind is JackpotKind.FIXED and kind != LevelKind.FIXED:
            raise InvalidInput(
                _("%(code)s is a fixed jackpot: its levels are fixed.") % {"code": pack.code}, code="bad_kind"
            )
        if spec.overflow_to not in OverflowTo.values:
            raise InvalidInput(
                _("Level %(name)s: unknown overflow %(overflow_to)r.")
                % {"name": spec.name, "overflow_to": spec.overflow_to},
                code="bad_overflow",
            )
        if spec.overflow_to == OverflowTo.NEXT_LEVEL and position == len(levels) - 1:
            raise InvalidInput(
                _("Level %(name)s is the last: it has no next level to overflow to.") % {"name": spec.name},
                code="bad_overflow",
            )
        if spec.mystery and (ceiling is None or kind == LevelKind.FIXED):
            raise InvalidInput(
                _("Level %(name)s: a must-hit-by level is progressive and needs a ceiling.")
                % {"name": spec.name},
                code="bad_mystery",
            )
        initial_reserve = meter_amount("initial_reserve", spec.initial_reserve, code="bad_reserve")
        checked.append(_Level(spec, seed, contribution_rate, reserve_rate, ceiling, kind, initial_reserve))
    return checked


def _check_names(
    name: str, code: str, authorisation_ref: str, currency: str, venue: Venue | None, network: Network | None
) -> None:
    if not name.strip() or not code.strip():
        raise InvalidInput(_("A pool needs a name and a code."), code="bad_pool_name")
    if not authorisation_ref.strip():
        raise InvalidInput(_("A pool needs its authorisation reference."), code="authorisation_required")
    if len(currency) != 3 or not currency.isalpha():
        raise InvalidInput(
            _("Currency %(currency)r is not a 3-letter code.") % {"currency": currency}, code="bad_currency"
        )
    if (venue is None) == (network is None):
        raise InvalidInput(_("A pool belongs to exactly one venue or one network."), code="pool_scope")


def _resolved_pack(
    rule_pack: str, jurisdiction: str, authorised_paytable: list[dict[str, Any]] | None
) -> RulePack | None:
    """The pool's rule pack (with its authorised paytable), or None for a pool without one."""
    if not rule_pack:
        if authorised_paytable:
            raise InvalidInput(_("A paytable belongs to a pool with a rule pack."), code="bad_paytable")
        return None
    if rule_pack not in PACKS:
        raise InvalidInput(
            _("No rule pack %(rule_pack)r.") % {"rule_pack": rule_pack}, code="unknown_rule_pack"
        )
    pack = PACKS[rule_pack]
    if pack.jurisdiction != jurisdiction:
        raise InvalidInput(
            _("%(rule_pack)s is a %(jurisdiction)s pack, the pool is %(jurisdiction2)s.")
            % {"rule_pack": rule_pack, "jurisdiction": pack.jurisdiction, "jurisdiction2": jurisdiction},
            code="rule_pack_jurisdiction",
        )
    if authorised_paytable:
        pack = with_authorised_paytable(pack, authorised_paytable)
    return pack


def _check_scope(
    pack: RulePack | None, jurisdiction: str, venue: Venue | None, network: Network | None
) -> None:
    scope_jurisdiction = venue.jurisdiction if venue is not None else network.jurisdiction  # type: ignore[union-attr]
    if scope_jurisdiction != jurisdiction:
        raise InvalidInput(
            _("The pool is %(jurisdiction)s but its %(scope_kind)s is %(scope_jurisdiction)s.")
            % {
                "jurisdiction": jurisdiction,
                "scope_kind": "venue" if venue else "network",
                "scope_jurisdiction": scope_jurisdiction,
            },
            code="scope_jurisdiction",
        )
    if network is not None and pack is not None and pack.code not in NETWORK_PACKS:
        raise InvalidInput(
            _("%(code)s pools may not link several establishments (spec §6.12).") % {"code": pack.code},
            code="network_not_allowed",
        )


def _checked_bet(pack: RulePack | None, rule_pack: str, carousel_bet: Decimal | None) -> Decimal | None:
    """The stipulated bet in cents; required where the pack's seeds or prizes are multiples of it."""
    bet = None if carousel_bet is None else cents("carousel_bet", carousel_bet, code="bad_bet")
    needs_bet = pack is not None and (
        pack.min_seed_multiple is not None
        or any(isinstance(row.prize, MultipleOfBet) for row in pack.paytable.rows)
        or any(
            isinstance(row.prize, MultipleOfBet)
            for row in (pack.discard_paytable.rows if pack.discard_paytable else ())
        )
    )
    if needs_bet and bet is None:
        raise InvalidInput(
            _("%(rule_pack)s needs the pool's stipulated bet (OP-37).") % {"rule_pack": rule_pack},
            code="carousel_bet_required",
        )
    return bet


def _open_level(pool: Pool, position: int, level: _Level, at: datetime, who: str) -> None:
    """One level saved at its seed, with its opening seed (and reserve) moves."""
    row = PoolLevel(
        pool=pool,
        position=position,
        name=level.spec.name.strip(),
        kind=level.kind,
        seed=level.seed,
        contribution_rate=level.contribution_rate,
        reserve_rate=level.reserve_rate,
        ceiling=level.ceiling,
        overflow_to=level.spec.overflow_to,
        mystery=level.spec.mystery,
        amount=level.seed,
        reserve=level.initial_reserve,
        updated_at=at,
    )
    row.must_hit_by = draw_must_hit_by(row, level.seed)
    row.save()
    LedgerMove.objects.create(
        pool=pool, level=row, kind=MoveKind.OPENING_SEED, amount=level.seed, actor=who, created_at=at
    )
    if level.initial_reserve:
        LedgerMove.objects.create(
            pool=pool,
            level=row,
            kind=MoveKind.OPENING_RESERVE,
            amount=level.initial_reserve,
            actor=who,
            created_at=at,
        )


def create_pool(
    *,
    name: str,
    code: str,
    jurisdiction: str,
    currency: str = "EUR",
    authorisation_ref: str,
    rule_pack: str,
    venue: Venue | None = None,
    network: Network | None = None,
    levels: Sequence[LevelSpec],
    carousel_bet: Decimal | None,
    actor: Actor,
    authorised_paytable: list[dict[str, Any]] | None = None,
) -> Pool:
    """A new pool with its levels at their seeds (opening seed moves recorded), audited, announced.

    `rule_pack` is a code of jackpots.rulepacks.PACKS for table pools, or "" for pools that only
    award_level pays (machines, bingo programs). Exactly one of `venue` / `network`; a network pool only
    where the pack allows linking establishments (spec §6.12). Each seed must meet the pack's minimum
    multiple of `carousel_bet` (AN10 5,000 ×, EU progressive 1,000 ×, EU fixed 2,000 ×).
    """
    _check_names(name, code, authorisation_ref, currency, venue, network)
    pack = _resolved_pack(rule_pack, jurisdiction, authorised_paytable)
    _check_scope(pack, jurisdiction, venue, network)
    bet = _checked_bet(pack, rule_pack, carousel_bet)
    checked = _checked_levels(pack, levels, bet)

    at = timezone.now()
    who = actor_label(actor)
    try:
        with transaction.atomic():
            if network is not None:
                # A network pool spans its venues' regions only under their agreements (spec §5, R-14).
                regions.check_network_span(network=network, venues=network.venues.select_related("region"))
            pool = Pool.objects.create(
                name=name.strip(),
                code=code.strip(),
                jurisdiction=jurisdiction,
                currency=currency.upper(),
                authorisation_ref=authorisation_ref.strip(),
                rule_pack=rule_pack,
                authorised_paytable=authorised_paytable or None,
                carousel_bet=bet,
                venue=venue,
                network=network,
                created_at=at,
                created_by=actor if isinstance(actor, User) else None,
            )
            for position, level in enumerate(checked):
                _open_level(pool, position, level, at, who)
            description = describe_pool(pool)
            record(pool, actor, EventType.POOL_CREATED, pool, description)
            notify.emit(pool, EventType.POOL_CREATED, PoolCreated(**notify.head(pool), **description))
    except IntegrityError as exc:
        if Pool.objects.filter(code=code.strip()).exists():
            raise Conflict(
                _("A pool with code %(code)r exists.") % {"code": code}, code="pool_code_taken"
            ) from exc
        raise
    return pool


def public_parameters(level: PoolLevel) -> dict[str, Any]:
    """A level's parameters as they may be shown and recorded: never the must-hit-by value."""
    return {
        "name": level.name,
        "kind": level.kind,
        "seed": level.seed,
        "contribution_rate": level.contribution_rate,
        "reserve_rate": level.reserve_rate,
        "ceiling": level.ceiling,
        "overflow_to": level.overflow_to,
        "mystery": level.mystery,
    }


def describe_pool(pool: Pool) -> PoolDescription:
    return PoolDescription(
        name=pool.name,
        jurisdiction=pool.jurisdiction,
        rule_pack=pool.rule_pack,
        carousel_bet=pool.carousel_bet,
        authorisation_ref=pool.authorisation_ref,
        venue=pool.venue_id,
        network=pool.network_id,
        levels=[{"id": lv.pk, **public_parameters(lv)} for lv in pool.levels.order_by("position")],
    )


# --- members ---------------------------------------------------------------------------------------------


def _scope_venue_ids(pool: Pool) -> set[int]:
    if pool.venue_id is not None:
        return {pool.venue_id}
    return set(pool.network.venues.values_list("pk", flat=True))  # type: ignore[union-attr]


def add_member(*, pool: Pool, source_type: str, source_id: str, venue: Venue, actor: Actor) -> PoolMember:
    """Let a source contribute to the pool: contributions then carry ``"<source_type>:<source_id>"``
    (optionally followed by ``"/<detail>"``, e.g. ``"table:12/seat:3"``) as their source."""
    if source_type not in SourceType.values:
        raise InvalidInput(
            _("Unknown source type %(source_type)r.") % {"source_type": source_type}, code="bad_source_type"
        )
    source_id = str(source_id).strip()
    if not source_id or ":" in source_id or "/" in source_id:
        raise InvalidInput(
            _("Source id %(source_id)r must be non-blank, without ':' or '/'.") % {"source_id": source_id},
            code="bad_source",
        )
    if venue.pk not in _scope_venue_ids(pool):
        raise InvalidInput(
            _("%(venue)s is not in the pool's scope.") % {"venue": venue}, code="member_outside_scope"
        )
    at = timezone.now()
    try:
        with transaction.atomic():
            member = PoolMember.objects.create(
                pool=pool,
                source_type=source_type,
                source_id=source_id,
                venue=venue,
                added_at=at,
                added_by=actor_label(actor),
            )
            data = Membership(member=member.key, venue=venue.pk, change="added")
            record(pool, actor, "pool.member_added", member, data)
            notify.emit(pool, EventType.POOL_MEMBERS_CHANGED, PoolMembersChanged(**notify.head(pool), **data))
    except IntegrityError as exc:
        raise Conflict(
            _("%(source_type)s:%(source_id)s is already a member of %(code)s.")
            % {"source_type": source_type, "source_id": source_id, "code": pool.code},
            code="already_member",
        ) from exc
    return member


def add_source_member(
    *, pool: Pool, source_type: str, source_id: str, venue: Venue, actor: Actor
) -> PoolMember:
    """``add_member`` for a door: the source must name a real object (a casino table, a bingo room, a
    machine, a venue) of ``venue``, itself in the pool's scope. Nothing is written otherwise."""
    source_id = str(source_id).strip()
    if source_type in SourceType.values:
        owner = sources.source_venue(source_type, source_id)
        if owner is None:
            raise InvalidInput(
                _("There is no %(type)s %(id)s to add to the pool.") % {"type": source_type, "id": source_id},
                code="unknown_source",
            )
        if owner != venue.pk:
            raise InvalidInput(
                _("%(type)s %(id)s belongs to another venue, not to %(venue)s.")
                % {"type": source_type, "id": source_id, "venue": venue},
                code="source_outside_venue",
            )
    door = sources.member_door(source_type)
    if door is not None:  # a casino table joins through its own service (its pool, its pack's checks)
        member: PoolMember = door.join(pool, source_id, actor)
        return member
    return add_member(pool=pool, source_type=source_type, source_id=source_id, venue=venue, actor=actor)


def remove_source_member(*, pool: Pool, member: PoolMember, actor: Actor) -> PoolMember:
    """``remove_member`` for a door: a source whose app keeps its own side of the membership (a casino
    table) leaves through that app's service."""
    door = sources.member_door(member.source_type)
    if door is not None:
        removed: PoolMember = door.leave(pool, member.source_id, actor)
        return removed
    return remove_member(pool=pool, source_type=member.source_type, source_id=member.source_id, actor=actor)


def remove_member(*, pool: Pool, source_type: str, source_id: str, actor: Actor) -> PoolMember:
    with transaction.atomic():
        member = locks.lock_member(pool=pool, source_type=source_type, source_id=str(source_id))
        if member is None:
            raise NotFound(
                _("%(source_type)s:%(source_id)s is not a member of %(code)s.")
                % {"source_type": source_type, "source_id": source_id, "code": pool.code},
                code="unknown_member",
            )
        member.removed_at = timezone.now()
        member.removed_by = actor_label(actor)
        member.save(update_fields=["removed_at", "removed_by"])
        data = Membership(member=member.key, venue=member.venue_id, change="removed")
        record(pool, actor, "pool.member_removed", member, data)
        notify.emit(pool, EventType.POOL_MEMBERS_CHANGED, PoolMembersChanged(**notify.head(pool), **data))
    return member


# --- parameters and corrections ------------------------------------------------------------------------


def _locked_level(level: PoolLevel) -> tuple[Pool, list[PoolLevel], PoolLevel]:
    pool = Pool.objects.select_related("network").get(pk=level.pool_id)
    levels = lock_levels(pool.pk)
    fold_locked(pool, levels, actor="system")
    locked = next(lv for lv in levels if lv.pk == level.pk)
    return pool, levels, locked


def _new_values(level: PoolLevel, changes: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(changes) - set(CHANGEABLE))
    if unknown:
        raise InvalidInput(
            _("Unknown or unchangeable parameters: %(unknown)s. Changeable: %(changeable)s.")
            % {"unknown": ", ".join(unknown), "changeable": ", ".join(CHANGEABLE)},
            code="unknown_parameter",
        )
    new: dict[str, Any] = {}
    for key, value in changes.items():
        if key == "name":
            if not str(value).strip():
                raise InvalidInput(_("A level needs a name."), code="bad_level_name")
            new[key] = str(value).strip()
        elif key == "seed":
            new[key] = meter_amount("seed", value, code="bad_seed")
        elif key in ("contribution_rate", "reserve_rate"):
            new[key] = _rate(key, value)
        elif key == "ceiling":
            new[key] = None if value is None else meter_amount("ceiling", value, code="bad_ceiling")
        elif key == "overflow_to":
            if value not in OverflowTo.values:
                raise InvalidInput(_("Unknown overflow %(value)r.") % {"value": value}, code="bad_overflow")
            new[key] = value
        elif key == "mystery":
            if not isinstance(value, bool):
                raise InvalidInput(_("mystery is true or false."), code="bad_mystery")
            new[key] = value
    return {k: v for k, v in new.items() if getattr(level, k) != v}


def _check_not_in_play(pool: Pool) -> None:
    problems = open_play_problems(pool)
    if problems:
        raise Conflict(
            _("%(code)s is in play: %(join_problems)s. Change its parameters between hands or games.")
            % {"code": pool.code, "join_problems": "; ".join(problems)},
            code="pool_in_play",
            problems=problems,
        )


def _check_merged(pool: Pool, levels: list[PoolLevel], level: PoolLevel, new: dict[str, Any]) -> None:
    """The level's parameters as they would be after the change, checked as a whole."""
    merged = {**public_parameters(level), **new}
    _check_rates(merged["contribution_rate"], merged["reserve_rate"])
    _check_ceiling(merged["seed"], merged["ceiling"], merged["name"])
    pack = PACKS.get(pool.rule_pack) if pool.rule_pack else None
    _check_seed(pack, merged["seed"], pool.carousel_bet, merged["name"])
    # meters never go down except by an award or a correction
    if merged["ceiling"] is not None and level.amount > merged["ceiling"]:
        raise Conflict(
            _("The meter stands at %(amount)s, above the new ceiling %(merged_ceiling)s.")
            % {"amount": display(level.amount), "merged_ceiling": merged["ceiling"]},
            code="ceiling_below_meter",
        )
    if merged["overflow_to"] == OverflowTo.NEXT_LEVEL and level.position == len(levels) - 1:
        raise InvalidInput(_("The last level has no next level to overflow to."), code="bad_overflow")
    if merged["mystery"] and (merged["ceiling"] is None or level.kind == LevelKind.FIXED):
        raise InvalidInput(_("A must-hit-by level is progressive and needs a ceiling."), code="bad_mystery")


def _apply_changes(pool: Pool, level: PoolLevel, new: dict[str, Any], who: str, at: datetime) -> Decimal:
    """Set and save the new values; a seed raised above the meter is funded at once by the operator."""
    for key, value in new.items():
        setattr(level, key, value)
    top_up = max(Decimal(0), level.seed - level.amount)
    if top_up:
        LedgerMove.objects.create(
            pool=pool,
            level=level,
            kind=MoveKind.OPERATOR_SEED,
            amount=top_up,
            reason=f"seed raised to {level.seed}",
            actor=who,
            created_at=at,
        )
        level.amount += top_up
    if {"seed", "ceiling", "mystery"} & set(new):
        level.must_hit_by = draw_must_hit_by(level, level.amount)
    level.params_version += 1
    level.version += 1
    level.updated_at = at
    level.save()
    return top_up


def check_parameter_change(*, level: PoolLevel, changes: dict[str, Any]) -> dict[str, Any]:
    """What ``change_parameters`` would set on the level, checked now without writing (a four-eyes
    proposal is refused at once when it could never apply): the new values as JSON (Decimals as text).
    ``change_parameters`` checks again when the change applies (the meter and the play may have moved)."""
    if not changes:
        raise InvalidInput(_("Nothing to change."), code="no_change")
    pool = Pool.objects.select_related("network").get(pk=level.pool_id)
    levels = list(PoolLevel.objects.filter(pool=pool).order_by("position"))
    new = _new_values(level, changes)
    if not new:
        raise InvalidInput(
            _("These are the level's current parameters: nothing to change."), code="no_change"
        )
    _check_merged(pool, levels, level, new)
    return _jsonable(new)


def change_parameters(
    *, level: PoolLevel, changes: dict[str, Any], actor: Actor, authorisation_ref: str
) -> ParameterChange:
    """Change a level's parameters while nothing is in play on the pool; who, when, old and new are kept.

    Refused with Conflict ``pool_in_play`` while any open-play guard names a reason. New rates apply to
    contributions from now on; a new seed applies from the next reset, except that a seed raised above
    the meter is funded at once by the operator (a recorded operator seed), so no meter stands below its
    seed. A ceiling below the current meter is refused (meters never go down except by an award or a
    correction). A must-hit-by level draws a new secret value when its seed, ceiling or switch changes.
    """
    if not authorisation_ref.strip():
        raise InvalidInput(
            _("A parameter change needs its authorisation reference."), code="authorisation_required"
        )
    if not changes:
        raise InvalidInput(_("Nothing to change."), code="no_change")
    with transaction.atomic():
        pool, levels, level = _locked_level(level)
        _check_not_in_play(pool)
        new = _new_values(level, changes)
        if not new:
            raise InvalidInput(
                _("These are the level's current parameters: nothing to change."), code="no_change"
            )
        _check_merged(pool, levels, level, new)
        old = {k: getattr(level, k) for k in new}
        at = timezone.now()
        who = actor_label(actor)
        top_up = _apply_changes(pool, level, new, who, at)
        change = ParameterChange.objects.create(
            pool=pool,
            level=level,
            old=_jsonable(old),
            new=_jsonable(new),
            authorisation_ref=authorisation_ref.strip(),
            actor=who,
            changed_by=actor if isinstance(actor, User) else None,
            changed_at=at,
        )
        changed = ParametersChange(
            level=level.pk,
            level_name=level.name,
            old=change.old,
            new=change.new,
            authorisation_ref=change.authorisation_ref,
            operator_seed=top_up,
            amount=display(level.amount),
        )
        record(pool, actor, EventType.POOL_PARAMETERS_CHANGED, change, changed)
        shown = PoolParametersChanged(**notify.head(pool), **changed)
        notify.emit(pool, EventType.POOL_PARAMETERS_CHANGED, shown)
    return change


def _jsonable(values: dict[str, Any]) -> dict[str, Any]:
    return {k: (str(v) if isinstance(v, Decimal) else v) for k, v in values.items()}


def correct_meter(
    *, level: PoolLevel, amount_delta: Decimal, reason: str, authorised_by: Actor, actor: Actor
) -> LedgerMove:
    """A recorded, authorised correction of a meter: the only way besides an award that a meter goes down.

    The corrected meter stays within [seed, ceiling]; the reason and who authorised it are kept.
    """
    delta = meter_amount(
        "amount_delta", abs(as_decimal("amount_delta", amount_delta, code="bad_amount")), code="bad_amount"
    )
    delta = delta if as_decimal("amount_delta", amount_delta, code="bad_amount") >= 0 else -delta
    if delta == 0:
        raise InvalidInput(_("A correction of 0 changes nothing."), code="bad_amount")
    if not reason.strip():
        raise InvalidInput(_("A correction needs its reason."), code="reason_required")
    authoriser = actor_label(authorised_by) if authorised_by is not None else ""
    if not authoriser.strip() or authoriser == "system":
        raise InvalidInput(_("A correction needs who authorised it."), code="authorisation_required")
    with transaction.atomic():
        pool, _levels, level = _locked_level(level)
        corrected = level.amount + delta
        if corrected < level.seed:
            raise Conflict(
                _("The correction would leave the meter at %(corrected)s, below its seed %(seed)s.")
                % {"corrected": corrected, "seed": level.seed},
                code="correction_below_seed",
            )
        if level.ceiling is not None and corrected > level.ceiling:
            raise Conflict(
                _("The correction would leave the meter at %(corrected)s, above its ceiling %(ceiling)s.")
                % {"corrected": corrected, "ceiling": level.ceiling},
                code="correction_above_ceiling",
            )
        at = timezone.now()
        move = LedgerMove.objects.create(
            pool=pool,
            level=level,
            kind=MoveKind.CORRECTION,
            amount=delta,
            reason=reason.strip(),
            authorised_by=authoriser,
            actor=actor_label(actor),
            created_at=at,
        )
        level.amount = corrected
        level.version += 1
        level.updated_at = at
        level.save(update_fields=["amount", "version", "updated_at"])
        corrected_by = Correction(
            level=level.pk,
            level_name=level.name,
            delta=delta,
            reason=move.reason,
            authorised_by=authoriser,
            amount=display(level.amount),
        )
        record(pool, actor, EventType.POOL_CORRECTED, move, corrected_by)
        notify.emit(pool, EventType.POOL_CORRECTED, PoolCorrected(**notify.head(pool), **corrected_by))
    return move
