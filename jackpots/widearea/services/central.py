"""The central's side of a wide-area pool: its settings and member venues, each venue's batches of
contributions recorded exactly once (the inbox numbers them; the pool's ledger keeps one row per level and
batch, the venue's exact sums), each hit decided once under the level's lock, the levels published on the
network's stream, and a venue's meters reconciled with what the central received.

The link's handlers (jackpots.widearea.link_handlers) call `accept_contributions`, `accept_hit` and
`accept_meters` inside the inbox's transaction; a refusal is a DomainError: the inbox records it as the
message's answer, applies nothing of it, and the venue's outbox moves on. Each refusal is logged and
counted on /metrics once (a message is accepted once, whatever the retries).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _

from halls import money
from halls.actors import Actor
from halls.errors import Conflict, DomainError, InvalidInput, NotFound
from halls.link.kinds import LinkKind
from halls.link.services import inbox, streams
from halls.link.services.reach import NETWORK_PREFIX
from halls.models import Venue
from halls.services import audit
from jackpots.models import Contribution, Pool, PoolLevel, SourceType
from jackpots.services import awards, pools, reports
from jackpots.services.auditing import fingerprint
from jackpots.services.locks import lock_levels
from jackpots.services.readmodels import meters
from jackpots.widearea import core, metrics
from jackpots.widearea.models import (
    OutcomeChoice,
    ReconciliationState,
    Side,
    WideAreaHit,
    WideAreaPool,
    WideAreaReconciliation,
    WideAreaVenue,
)
from jackpots.widearea.services import feed
from jackpots.widearea.services.differences import record_differences

log = logging.getLogger("hall.widearea")
CENTRAL = "widearea.central"


def _refuse(error: DomainError) -> DomainError:
    """Log and count a refusal once (the inbox records the message once), then hand it back to raise."""
    log.warning("wide-area input refused: %s (%s)", error.code, error.message)
    metrics.refused("central", error.code)
    return error


def stream_of(pool: Pool) -> str:
    assert pool.network is not None
    return f"{NETWORK_PREFIX}{pool.network.code}"


# --- setting up ------------------------------------------------------------------------------------------


def make_wide_area(
    *,
    pool: Pool,
    actor: Actor,
    offline_after_seconds: int = 30,
    offline_action: str = core.OfflineAction.UNAVAILABLE,
    second_hit: str = core.SecondHit.RESET,
    simultaneous_ms: int = 2000,
    mixed_sources_authorised: bool = False,
) -> WideAreaPool:
    """A network pool offered across its venues, with its link-failure and simultaneous-hit settings."""
    if pool.network_id is None:
        raise InvalidInput(_("A wide-area pool is a network's pool."), code="not_a_network_pool")
    action = core.OfflineAction(offline_action)
    rule = core.SecondHit(second_hit)
    if offline_after_seconds < 1:
        raise InvalidInput(_("The window is at least one second."), code="bad_window")
    with transaction.atomic():
        wide = WideAreaPool.objects.create(
            pool=pool,
            offline_after_seconds=offline_after_seconds,
            offline_action=action.value,
            second_hit=rule.value,
            simultaneous_ms=simultaneous_ms,
            mixed_sources_authorised=mixed_sources_authorised,
        )
        audit.record_across(
            venue_ids=sorted(pool.network.venues.values_list("pk", flat=True)),  # type: ignore[union-attr]
            actor=actor,
            action="widearea.created",
            obj=wide,
            data={
                "pool": pool.code,
                "offline_after_seconds": offline_after_seconds,
                "offline_action": action.value,
                "second_hit": rule.value,
                "simultaneous_ms": simultaneous_ms,
                "mixed_sources_authorised": mixed_sources_authorised,
            },
        )
    return wide


def add_venue(*, wide_area: WideAreaPool, venue: Venue, actor: Actor) -> WideAreaVenue:
    """The venue's members contribute from now on (its batches are refused before and after)."""
    with transaction.atomic():
        pools.add_member(
            pool=wide_area.pool,
            source_type=SourceType.VENUE,
            source_id=str(venue.pk),
            venue=venue,
            actor=actor,
        )
        member, _created = WideAreaVenue.objects.update_or_create(
            wide_area=wide_area, venue=venue, defaults={"joined_at": timezone.now(), "left_at": None}
        )
        audit.record(
            venue_id=venue.pk,
            actor=actor,
            action="widearea.venue_joined",
            obj=member,
            data={"pool": wide_area.pool.code},
        )
    return member


def remove_venue(*, wide_area: WideAreaPool, venue: Venue, actor: Actor) -> WideAreaVenue:
    """The venue leaves the pool: its later batches and hits are refused (`venue_not_in_pool`)."""
    with transaction.atomic():
        member = WideAreaVenue.objects.get(wide_area=wide_area, venue=venue, left_at__isnull=True)
        pools.remove_member(
            pool=wide_area.pool, source_type=SourceType.VENUE, source_id=str(venue.pk), actor=actor
        )
        member.left_at = timezone.now()
        member.save(update_fields=["left_at"])
        audit.record(
            venue_id=venue.pk,
            actor=actor,
            action="widearea.venue_left",
            obj=member,
            data={"pool": wide_area.pool.code},
        )
    return member


# --- a venue's messages ----------------------------------------------------------------------------------


def _wide_area(code: Any) -> WideAreaPool:
    found = (
        WideAreaPool.objects.select_related("pool", "pool__network").filter(pool__code=str(code)).first()
        if isinstance(code, str)
        else None
    )
    if found is None or not found.pool.active:
        raise _refuse(
            NotFound(_("No wide-area pool “%(code)s”.") % {"code": code}, code="unknown_pool", pool=str(code))
        )
    return found


def _member(wide: WideAreaPool, venue_id: int) -> WideAreaVenue:
    member = WideAreaVenue.objects.filter(wide_area=wide, venue_id=venue_id, left_at__isnull=True).first()
    if member is None:
        raise _refuse(
            Conflict(
                _("This venue is not (or no longer) a member of the wide-area pool %(code)s.")
                % {"code": wide.pool.code},
                code="venue_not_in_pool",
                pool=wide.pool.code,
            )
        )
    return member


def _membership(code: Any, venue_id: int) -> tuple[WideAreaPool, WideAreaVenue]:
    """The pool and the venue's membership in ONE query (a batch's path); a refusal as `_wide_area` and
    `_member` name it when there is none."""
    member = (
        WideAreaVenue.objects.select_related("wide_area__pool__network")
        .filter(wide_area__pool__code=code, venue_id=venue_id, left_at__isnull=True)
        .first()
        if isinstance(code, str)
        else None
    )
    if member is not None and member.wide_area.pool.active:
        return member.wide_area, member
    wide = _wide_area(code)
    return wide, _member(wide, venue_id)


def _levels(pool: Pool) -> dict[str, PoolLevel]:
    return {level.name: level for level in PoolLevel.objects.filter(pool=pool).order_by("position")}


def _check_kinds(wide: WideAreaPool, venue_id: int, kinds: Any) -> None:
    """OP-32: machines and casino tables feed one pool only under its express authorisation (the kinds
    each venue's batches named so far are kept on its membership)."""
    if wide.mixed_sources_authorised or not isinstance(kinds, list):
        return
    seen: set[str] = {str(k) for k in kinds}
    for others in (
        WideAreaVenue.objects.filter(wide_area=wide)
        .exclude(venue_id=venue_id)
        .values_list("kinds", flat=True)
    ):
        seen |= set(others)
    if len(seen) > 1:
        raise _refuse(
            Conflict(
                _("The pool %(code)s is not authorised to mix machines and casino tables (OP-32).")
                % {"code": wide.pool.code},
                code="mixed_sources_not_authorised",
            )
        )


def accept_contributions(*, venue_id: int, payload: dict[str, Any]) -> dict[str, Any]:
    """A venue's batch: one ledger row per level holding the venue's exact sums (the pool's meter then
    holds, to the sixth decimal, what the venue's members contributed), its meters at the central moved
    on."""
    wide, member = _membership(payload.get("pool"), venue_id)
    try:
        sums = core.sums_from_payload(payload.get("levels"))
        first, through = int(payload["from"]), int(payload["through"])
    except (money.MoneyError, KeyError, TypeError, ValueError) as exc:
        raise _refuse(
            InvalidInput(
                _("A contribution batch the central cannot read: %(e)s") % {"e": exc}, code="bad_batch"
            )
        ) from None
    if first < member.through or through <= first:
        raise _refuse(
            Conflict(
                _("Contributions %(first)s-%(through)s were already received (through %(had)s).")
                % {"first": first, "through": through, "had": member.through},
                code="batch_already_received",
            )
        )
    _check_kinds(wide, venue_id, payload.get("kinds"))
    # the pool's lock (waits for no contributor: folding's watermark stays safe), its levels read with it
    levels = {level.name: level for level in lock_levels(wide.pool.pk)}
    unknown = sorted(set(sums) - set(levels))
    if unknown:
        raise _refuse(
            InvalidInput(
                _("The pool %(code)s has no level %(levels)s.") % {"code": wide.pool.code, "levels": unknown},
                code="unknown_level",
            )
        )
    at = timezone.now()
    Contribution.objects.bulk_create(
        [
            Contribution(
                pool=wide.pool,
                level=levels[name],
                source=f"{SourceType.VENUE}:{venue_id}",
                bet=money.cents(s.bet),
                to_meter=s.to_meter,
                to_reserve=s.to_reserve,
                house=s.house,
                idempotency_key=f"wa:{venue_id}:{through}",
                actor=CENTRAL,
                created_at=at,
            )
            for name, s in sorted(sums.items())
            if s.count
        ]
    )
    received = core.merge(core.sums_from_payload(member.received), sums)
    member.received = core.sums_payload(received)
    member.batches += 1
    member.through = through
    if isinstance(payload.get("kinds"), list):
        member.kinds = sorted({*member.kinds, *(str(k) for k in payload["kinds"])})
    member.save(update_fields=["received", "batches", "through", "kinds"])
    audit.record(
        venue_id=venue_id,
        actor=CENTRAL,
        action="widearea.batch_received",
        obj=member,
        data={"pool": wide.pool.code, "from": first, "through": through, "levels": core.sums_payload(sums)},
    )
    metrics.BATCHES.inc()
    # The levels go out from the beat's publish_wide_area_levels (every HALL_WIDE_AREA_LEVELS_SECONDS),
    # not per batch: twenty venues' batches would read the pool's meters twenty times for one publication.
    return {"through": through}


def _hit_at(payload: dict[str, Any], key: str) -> tuple[datetime, datetime | None]:
    at = parse_datetime(str(payload.get("at") or ""))
    if at is None:
        raise _refuse(InvalidInput(_("The hit %(key)s has no time.") % {"key": key}, code="bad_hit"))
    heard = parse_datetime(str(payload.get("heard_at") or "")) if payload.get("heard_at") else None
    return at, heard


def accept_hit(*, venue_id: int, payload: dict[str, Any]) -> dict[str, Any]:
    """A member's hit, decided once under the level's lock: won (the level's meter), or, in the same
    instant as the level's last winner, re-decided against the reset level or left without a prize (the
    pool's setting). The decision goes on the network's stream (the winning venue pays it at its cashier;
    every venue shows the reset level)."""
    wide = _wide_area(payload.get("pool"))
    _member(wide, venue_id)
    key, source, level_name = (
        str(payload.get("key") or ""),
        str(payload.get("source") or ""),
        payload.get("level"),
    )
    if not key or len(key) > 100 or not source:
        raise _refuse(InvalidInput(_("A hit names its key and its source."), code="bad_hit"))
    hit_at, heard_at = _hit_at(payload, key)
    level = _levels(wide.pool).get(str(level_name))
    if level is None:
        raise _refuse(
            InvalidInput(
                _("The pool %(code)s has no level %(level)s.")
                % {"code": wide.pool.code, "level": level_name},
                code="unknown_level",
            )
        )
    window = timedelta(seconds=wide.offline_after_seconds)
    if heard_at is None or hit_at - heard_at > window:
        raise _refuse(
            Conflict(
                _(
                    "The hit %(key)s came while the venue had not heard the central for longer than "
                    "the pool's window."
                )
                % {"key": key},
                code="venue_offline",
            )
        )
    if WideAreaHit.objects.filter(wide_area=wide, venue_id=venue_id, key=key).exists():
        raise _refuse(
            Conflict(_("The hit %(key)s was already decided.") % {"key": key}, code="duplicate_hit")
        )
    lock_levels(wide.pool.pk)  # hits on the pool serialize here: the first to arrive finds the meter
    last = (
        WideAreaHit.objects.filter(level=level, outcome__in=[OutcomeChoice.WON, OutcomeChoice.REDECIDED])
        .order_by("-decided_at", "-id")
        .values_list("hit_at", flat=True)
        .first()
    )
    outcome = core.decide(
        hit_at=hit_at,
        last_won_at=last,
        simultaneous_seconds=wide.simultaneous_ms / 1000,
        second_hit=wide.second_hit,
    )
    amount, settlement = Decimal("0.00"), None
    if outcome != core.Outcome.LOST:
        result = awards.award_level(
            level=level,
            percent=money.HUNDRED,
            winner={"source": f"{SourceType.VENUE}:{venue_id}", "label": source[:60], "hand": key[:60]},
            idempotency_key=f"wa:{venue_id}:{key}",
            actor=CENTRAL,
        )
        amount, settlement = result.total_paid, result.settlement_id
    now = timezone.now()
    WideAreaHit.objects.create(
        wide_area=wide,
        venue_id=venue_id,
        key=key,
        level=level,
        source=source,
        hit_at=hit_at,
        outcome=outcome.value,
        amount=amount,
        settlement_id=settlement,
        decided_at=now,
    )
    metrics.HITS.labels(outcome=outcome.value).inc()
    licence = Venue.objects.values_list("licence_number", flat=True).get(pk=venue_id)
    decision = {
        "pool": wide.pool.code,
        "level": level.name,
        "venue": licence,
        "key": key,
        "source": source,
        "outcome": outcome.value,
        "amount": money.text(amount),
        "levels": current_levels(wide.pool),
    }
    audit.record(venue_id=venue_id, actor=CENTRAL, action="widearea.hit_decided", obj=wide, data=decision)
    streams.append(stream=stream_of(wide.pool), kind=LinkKind.WA_DECISION, payload=decision)
    publish_levels(wide_area=wide, at=now, force=True)
    return {"outcome": outcome.value, "amount": money.text(amount)}


def _since_last(
    wide: WideAreaPool, venue_id: int, sequence: int
) -> tuple[dict[str, core.LevelSums], dict[str, core.LevelSums], int]:
    """The central's own records of the venue before its message `sequence`, each summed by level:
    what it applied from the venue's batches (the contribution messages the link accepted and did not
    refuse: the inbox's record, independent of the membership's running one) and the pool's ledger rows
    attributed to the venue (one per level and batch; money only), with the last ledger row's id. Both
    carried on from the venue's last reconciliation (the inbox and the ledger are append-only), so each
    reconciliation reads only what came since."""
    last = (
        WideAreaReconciliation.objects.filter(
            side=Side.CENTRAL, venue_id=venue_id, pool_code=wide.pool.code, key__lt=sequence
        )
        .order_by("-key")
        .first()
    )
    after, applied, ledger, ledger_through = 0, {}, {}, 0
    if last is not None:
        after, ledger_through = last.key, last.ledger_through
        applied, ledger = core.sums_from_payload(last.applied), core.sums_from_payload(last.ledger)
    for message in inbox.accepted_messages(venue_id=venue_id, kind=LinkKind.WA_CONTRIBUTIONS, after=after):
        if message.payload.get("pool") != wide.pool.code or "refused" in (message.answer or {}):
            continue
        applied = core.merge(applied, core.sums_from_payload(message.payload.get("levels")))
    rows = list(
        Contribution.objects.filter(
            pool=wide.pool, source=f"{SourceType.VENUE}:{venue_id}", id__gt=ledger_through
        )
        .order_by("id")
        .values_list("id", "level__name", "bet", "to_meter", "to_reserve", "house")
    )
    if rows:
        ledger_through = rows[-1][0]
        added = core.add_up((name, bet, m, r, h) for _id, name, bet, m, r, h in rows)
        ledger = core.money_only(core.merge(ledger, added))
    return applied, ledger, ledger_through


def _told(row: WideAreaReconciliation, licence: str, found: list[dict[str, str]]) -> dict[str, Any]:
    """What the venue is told of its reconciliation (on the network's stream, and as the message's answer
    in short)."""
    return {
        "pool": row.pool_code,
        "venue": licence,
        "sequence": row.key,
        "through": row.through,
        "levels": row.received,
        "applied": row.applied,
        "ledger": row.ledger,
        "state": row.state,
        "differences": found,
    }


def _answer(row: WideAreaReconciliation, by_check: dict[str, int]) -> dict[str, Any]:
    return {
        "reconciliation": row.pk,
        "state": row.state,
        "differences": row.differences,
        "by_check": {check.value: by_check.get(check.value, 0) for check in core.Check},
    }


def accept_meters(*, venue_id: int, payload: dict[str, Any], sequence: int) -> dict[str, Any]:
    """The venue's totals forwarded so far (`payload`, the venue's meters message numbered `sequence` on
    the link), reconciled with the central's own records of the venue (every earlier batch is applied:
    the outbox is in order): its running record of the batches received, the batches the link accepted
    from it, and the pool's ledger rows attributed to it (core.reconcile). The reconciliation and each
    difference recorded once (the same message again: its first answer), audited, counted and told back
    to the venue."""
    wide = _wide_area(payload.get("pool"))
    member = WideAreaVenue.objects.filter(wide_area=wide, venue_id=venue_id).first()
    if member is None:
        raise _refuse(
            Conflict(
                _("This venue was never a member of %(code)s.") % {"code": wide.pool.code},
                code="venue_not_in_pool",
            )
        )
    try:
        stated = core.sums_from_payload(payload.get("levels"))
        through = int(payload.get("through") or 0)
    except (money.MoneyError, TypeError, ValueError) as exc:
        raise _refuse(InvalidInput(str(exc), code="bad_meters")) from None
    earlier = WideAreaReconciliation.objects.filter(
        side=Side.CENTRAL, venue_id=venue_id, pool_code=wide.pool.code, key=sequence
    ).first()
    if earlier is not None:  # the same message reconciled before: answered as then, nothing recorded
        kinds = list(earlier.found.values_list("kind", flat=True))
        return _answer(earlier, {k: kinds.count(k) for k in set(kinds)})
    received = core.sums_from_payload(member.received)
    applied, ledger, ledger_through = _since_last(wide, venue_id, sequence)
    found = core.reconcile(stated=stated, received=received, applied=applied, ledger=ledger)
    now = timezone.now()
    row = WideAreaReconciliation.objects.create(
        side=Side.CENTRAL,
        pool_code=wide.pool.code,
        venue_id=venue_id,
        key=sequence,
        through=through,
        stated=core.sums_payload(stated),
        received=core.sums_payload(received),
        applied=core.sums_payload(applied),
        ledger=core.sums_payload(ledger),
        ledger_through=ledger_through,
        differences=len(found),
        state=ReconciliationState.DIFFERS if found else ReconciliationState.AGREED,
        reconciled_at=now,
    )
    record_differences(row, found)
    by_check = {check.value: sum(1 for f in found if f.check == check) for check in core.Check}
    if found:
        log.warning("wide-area meters of venue %s differ from the central's: %s", venue_id, found)
        metrics.DIFFERENCES.inc(len(found))
    for check, count in by_check.items():
        if count:
            metrics.RECONCILE_DIFFERENCES.labels(side=Side.CENTRAL, check=check).inc(count)
    metrics.RECONCILIATIONS.labels(side=Side.CENTRAL, state=row.state).inc()
    licence = Venue.objects.values_list("licence_number", flat=True).get(pk=venue_id)
    told = _told(row, licence, [f.as_payload() for f in found])
    audit.record(venue_id=venue_id, actor=CENTRAL, action="widearea.meters_reconciled", obj=row, data=told)
    feed.reconciled(row)  # after the audit entry: the feed's outbox is locked after the audit's head
    streams.append(stream=stream_of(wide.pool), kind=LinkKind.WA_RECONCILED, payload=told)
    return _answer(row, by_check)


# --- the levels on the network's stream -------------------------------------------------------------------


def current_levels(pool: Pool) -> list[dict[str, str]]:
    """The pool's live levels as the venues show them (one query: meters.live_levels)."""
    levels = meters.live_levels([pool.pk]).get(pool.pk, ())
    return [{"level": name, "amount": money.text(amount)} for name, amount in levels]


def publish_levels(*, wide_area: WideAreaPool, at: datetime | None = None, force: bool = False) -> bool:
    """The pool's levels on the network's stream when they changed (at most every
    HALL_WIDE_AREA_LEVELS_SECONDS), or as the venues' heartbeat (every HALL_WIDE_AREA_HEARTBEAT_SECONDS);
    `force`: now (a decision). Inside the caller's transaction, or its own. True when appended."""
    now = at or timezone.now()
    with transaction.atomic():
        # The pool's lock (the one its writers take) serializes two publishers: a level is appended once.
        lock_levels(wide_area.pool_id)
        row = WideAreaPool.objects.select_related("pool", "pool__network").get(pk=wide_area.pk)
        levels = current_levels(row.pool)
        print_ = fingerprint(levels)
        since = None if row.levels_published_at is None else (now - row.levels_published_at).total_seconds()
        due = (
            force
            or since is None
            or since >= settings.HALL_WIDE_AREA_HEARTBEAT_SECONDS
            or (print_ != row.levels_fingerprint and since >= settings.HALL_WIDE_AREA_LEVELS_SECONDS)
        )
        if not due:
            return False
        venues = list(
            WideAreaVenue.objects.filter(wide_area=row, left_at__isnull=True)
            .order_by("venue__licence_number")
            .values_list("venue__licence_number", flat=True)
        )
        streams.append(
            stream=stream_of(row.pool),
            kind=LinkKind.WA_LEVELS,
            payload={
                "pool": row.pool.code,
                "levels": levels,
                "at": now.isoformat(),
                "offline_after_seconds": row.offline_after_seconds,
                "offline_action": row.offline_action,
                "venues": venues,
            },
        )
        WideAreaPool.objects.filter(pk=row.pk).update(levels_published_at=now, levels_fingerprint=print_)
    return True


def publish_all(at: datetime | None = None) -> int:
    """Every active wide-area pool's levels, where due (the beat's task)."""
    done = 0
    for wide in WideAreaPool.objects.filter(pool__active=True).order_by("pk"):
        done += publish_levels(wide_area=wide, at=at)
    return done


# --- the balancing report ----------------------------------------------------------------------------------


def balance(*, wide_area: WideAreaPool) -> dict[str, Any]:
    """The central's check, per level, to the cent: the pool's ledger contributions equal the sum of the
    member venues' received meters, and the engine's balancing equation holds (jackpots.services.reports)."""
    report = reports.balance(wide_area.pool)
    received: dict[str, core.LevelSums] = {}
    for member in WideAreaVenue.objects.filter(wide_area=wide_area):
        received = core.merge(received, core.sums_from_payload(member.received))
    ledger = core.add_up(
        (name, bet, m, r, h)
        for name, bet, m, r, h in Contribution.objects.filter(pool=wide_area.pool)
        .select_related("level")
        .values_list("level__name", "bet", "to_meter", "to_reserve", "house")
    )
    mismatches = [
        d.as_payload()
        for d in core.differences(
            {k: core.LevelSums(0, v.bet, v.to_meter, v.to_reserve, v.house) for k, v in received.items()},
            {k: core.LevelSums(0, v.bet, v.to_meter, v.to_reserve, v.house) for k, v in ledger.items()},
        )
    ]
    by_venue = _ledger_by_venue(wide_area)
    return {
        "holds": report.holds and not mismatches and not by_venue,
        "ledger_vs_venues": mismatches,
        "ledger_by_venue": by_venue,
        "report": report.as_dict(),
    }


def _ledger_by_venue(wide_area: WideAreaPool) -> dict[str, list[dict[str, str]]]:
    """Per member venue (by licence), where the pool's ledger rows attributed to it differ from the
    central's record of what it received (money only, to the sixth decimal); none when every venue agrees."""
    rows: dict[str, list[core.Row]] = {}
    for source, name, bet, m, r, h in (
        Contribution.objects.filter(pool=wide_area.pool, source__startswith=f"{SourceType.VENUE}:")
        .order_by()
        .values_list("source", "level__name", "bet", "to_meter", "to_reserve", "house")
    ):
        rows.setdefault(source, []).append((name, bet, m, r, h))
    out: dict[str, list[dict[str, str]]] = {}
    members = WideAreaVenue.objects.filter(wide_area=wide_area).select_related("venue").order_by("venue_id")
    for member in members:
        ledger = core.add_up(rows.pop(f"{SourceType.VENUE}:{member.venue_id}", []))
        received = core.sums_from_payload(member.received)
        found = core.differences(core.money_only(received), core.money_only(ledger))
        if found:
            out[member.venue.licence_number] = [d.as_payload() for d in found]
    for source, left in sorted(rows.items()):  # rows of a venue that was never a member
        out[source] = [d.as_payload() for d in core.differences({}, core.money_only(core.add_up(left)))]
    return out
