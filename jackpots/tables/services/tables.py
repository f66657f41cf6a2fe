"""Casino tables and their pool: create a table, join it to a pool (a carrusel of all or some tables),
leave the pool, close it for a while (spec §6.12, §6.15)."""

from __future__ import annotations

from decimal import Decimal

from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from halls import money
from halls.actors import Actor
from halls.errors import Conflict, InvalidInput, NotFound
from halls.eventtypes import EventType, TableCreated, TablePool, TableStateChanged
from halls.models import Venue
from jackpots.models import Pool, PoolMember, SourceType
from jackpots.rulepacks import PACKS
from jackpots.services import pools as pool_services
from jackpots.services.locks import hold_pool
from jackpots.services.packs import pool_pack
from jackpots.tables import rules
from jackpots.tables.models import CasinoTable, Hand, HandState, TableGame, TableState
from jackpots.tables.services.changes import head, record
from jackpots.tables.services.locks import hold_venue_tables, lock_table


def describe_table(table: CasinoTable) -> TableCreated:
    return TableCreated(
        **head(table),
        number=table.number,
        name=table.name,
        game=table.game,
        table_minimum=table.table_minimum,
        seats=table.seats,
        layout=table.layout,
        rule_pack=table.rule_pack,
        state=table.state,
        pool=table.pool_id,
    )


def create_table(
    *,
    venue: Venue,
    number: int,
    name: str,
    game: str,
    table_minimum: Decimal,
    rule_pack: str,
    actor: Actor,
    seats: int | None = None,
    layout: str = "",
) -> CasinoTable:
    """A poker or blackjack table of the venue; its pool bets follow `rule_pack` (a jurisdiction variant)."""
    if game not in TableGame.values:
        raise InvalidInput(
            _("Unknown game %(game)r; games: %(games)s.")
            % {"game": game, "games": ", ".join(TableGame.values)},
            code="unknown_game",
        )
    if rule_pack not in PACKS:
        raise InvalidInput(
            _("No rule pack %(rule_pack)r.") % {"rule_pack": rule_pack}, code="unknown_rule_pack"
        )
    pack = PACKS[rule_pack]
    rules.check_pack_for_game(pack, game)
    if pack.jurisdiction != venue.jurisdiction:
        raise InvalidInput(
            _("%(rule_pack)s is a %(jurisdiction)s pack; %(venue)s is under %(venue_jurisdiction)s.")
            % {
                "rule_pack": rule_pack,
                "jurisdiction": pack.jurisdiction,
                "venue": venue,
                "venue_jurisdiction": venue.jurisdiction,
            },
            code="rule_pack_jurisdiction",
        )
    if not name.strip():
        raise InvalidInput(_("A table needs a name."), code="bad_table_name")
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise InvalidInput(
            _("Table number %(number)r must be 1 or more.") % {"number": number}, code="bad_table_number"
        )
    seat_count = rules.DEFAULT_SEATS[game] if seats is None else seats
    if (
        isinstance(seat_count, bool)
        or not isinstance(seat_count, int)
        or not 1 <= seat_count <= rules.MAX_SEATS
    ):
        raise InvalidInput(
            _("A table has 1 to %(max_seats)s seats, not %(seats)r.")
            % {"max_seats": rules.MAX_SEATS, "seats": seats},
            code="bad_seats",
        )
    if (
        not isinstance(table_minimum, Decimal)
        or not table_minimum.is_finite()
        or table_minimum <= 0
        or table_minimum != table_minimum.quantize(money.CENT)
    ):
        raise InvalidInput(
            _("The table minimum %(table_minimum)s must be positive, in cents.")
            % {"table_minimum": table_minimum},
            code="bad_amount",
        )
    try:
        with transaction.atomic():
            if pack.all_tables and pack.game == game:
                hold_venue_tables(venue.pk)
            table = CasinoTable.objects.create(
                venue=venue,
                number=number,
                name=name.strip(),
                game=game,
                table_minimum=table_minimum,
                seats=seat_count,
                layout=layout.strip(),
                rule_pack=rule_pack,
                created_at=timezone.now(),
            )
            table = lock_table(table.pk)  # before the audit head and the stream (halls.locks)
            record(table, actor, EventType.TABLE_CREATED, table, describe_table(table))
            # A new table of a carrusel of ALL the tables of its game joins it at once (spec §6.12).
            carrusel = _formed_carrusel(table)
            if carrusel is not None:
                _join_locked(table, carrusel, actor, automatic=True)
    except IntegrityError as exc:
        raise Conflict(
            _("%(venue)s already has a table number %(number)s.") % {"venue": venue, "number": number},
            code="table_number_taken",
        ) from exc
    return table


def _open_hand(table: CasinoTable) -> Hand | None:
    return Hand.objects.filter(table=table, state=HandState.OPEN).first()


def join_pool(*, table: CasinoTable, pool: Pool, actor: Actor) -> CasinoTable:
    """Make the table a member of the pool (source "table:<id>"): its pool bets contribute there.

    The pool must follow the table's rule pack (so a carrusel links tables of the games the pack
    allows: one game, or AN10's interconnection of poker modalities), have its paytable (OP-30), and its
    stipulated bet must be allowed at this table (½ the table minimum where the pack caps it). Where the
    pack's carrusel is formed by all the tables of its game in the room (ML art. 61, AN96), the table
    joins only if it is the last one missing: several join together through ``form_carrusel``.
    """
    with transaction.atomic():
        _hold_if_all_tables(pool)
        table = lock_table(table.pk)
        pool = Pool.objects.select_related("network").get(pk=pool.pk)
        _check_all_tables(pool, [table])
        _join_locked(table, pool, actor)
    return table


def join_pool_member(pool: Pool, source_id: str, actor: Actor) -> PoolMember:
    """The pools API's door for a "table" member (jackpots.services.sources.MemberDoor): the table joins
    through ``join_pool``, so it plays into the pool, and the membership row is returned."""
    table = CasinoTable.objects.filter(pk=int(source_id)).first()
    if table is None:
        raise NotFound(_("No table %(table_id)s.") % {"table_id": source_id}, code="unknown_table")
    if table.pool_id == pool.pk:  # as for any source named twice
        raise Conflict(
            _("%(source_type)s:%(source_id)s is already a member of %(code)s.")
            % {"source_type": SourceType.TABLE, "source_id": source_id, "code": pool.code},
            code="already_member",
        )
    join_pool(table=table, pool=pool, actor=actor)
    return _membership(pool, table)


def leave_pool_member(pool: Pool, source_id: str, actor: Actor) -> PoolMember:
    table = CasinoTable.objects.filter(pk=int(source_id)).first()
    if table is None or table.pool_id != pool.pk:
        # A membership row with no table behind it (written before tables joined through here).
        return pool_services.remove_member(
            pool=pool, source_type=SourceType.TABLE, source_id=source_id, actor=actor
        )
    leave_pool(table=table, actor=actor)
    return PoolMember.objects.filter(pool=pool, source_type=SourceType.TABLE, source_id=source_id).latest(
        "pk"
    )


def _membership(pool: Pool, table: CasinoTable) -> PoolMember:
    return PoolMember.objects.get(
        pool=pool, source_type=SourceType.TABLE, source_id=str(table.pk), removed_at__isnull=True
    )


def form_carrusel(*, pool: Pool, tables: list[CasinoTable], actor: Actor) -> list[CasinoTable]:
    """Join several tables to the pool at once (a carrusel formed), all or none. Where the pack's
    carrusel is formed by all the tables of its game in the room, every one of them must be named (or
    be a member already): the missing ones are named in the refusal."""
    if not tables:
        raise InvalidInput(_("Name the tables that form the carrusel."), code="no_tables")
    with transaction.atomic():
        _hold_if_all_tables(pool)
        locked = [lock_table(pk) for pk in sorted({t.pk for t in tables})]
        pool = Pool.objects.select_related("network").get(pk=pool.pk)
        _check_all_tables(pool, locked)
        for table in locked:
            _join_locked(table, pool, actor)
    return locked


def create_carrusel(
    *,
    venue: Venue,
    name: str,
    code: str,
    rule_pack: str,
    authorisation_ref: str,
    seed: Decimal,
    contribution_rate: Decimal,
    carousel_bet: Decimal | None,
    tables: list[CasinoTable],
    actor: Actor,
) -> Pool:
    """A carrusel pool of the venue (one level) formed over the chosen tables, in one transaction: the
    pool's checks (pools.create_pool: its pack, seed floor, bet) and each table's (``form_carrusel``:
    the pack, the bet cap, and ALL the tables of the game where the pack says so, the missing ones
    named). Any refusal leaves neither the pool nor a membership behind."""
    if not tables:
        raise InvalidInput(_("Name the tables that form the carrusel."), code="no_tables")
    if rule_pack not in PACKS:
        raise InvalidInput(
            _("No rule pack %(rule_pack)r.") % {"rule_pack": rule_pack}, code="unknown_rule_pack"
        )
    foreign = sorted(t.number for t in tables if t.venue_id != venue.pk)
    if foreign:
        raise InvalidInput(
            _("Tables %(numbers)s are not %(venue)s's.")
            % {"numbers": ", ".join(map(str, foreign)), "venue": venue},
            code="table_outside_venue",
        )
    with transaction.atomic():
        if PACKS[rule_pack].all_tables:
            hold_venue_tables(venue.pk)
        # Tables first (halls.locks: TABLE before the pool's audit heads and streams).
        locked = [lock_table(pk) for pk in sorted({t.pk for t in tables})]
        pool = pool_services.create_pool(
            name=name,
            code=code,
            jurisdiction=venue.jurisdiction,
            authorisation_ref=authorisation_ref,
            rule_pack=rule_pack,
            venue=venue,
            levels=[pool_services.LevelSpec(name=name, seed=seed, contribution_rate=contribution_rate)],
            carousel_bet=carousel_bet,
            actor=actor,
        )
        _check_all_tables(pool, locked)
        for table in locked:
            _join_locked(table, pool, actor)
    return pool


def _hold_if_all_tables(pool: Pool) -> None:
    pack = PACKS.get(pool.rule_pack)
    if pack is not None and pack.all_tables and pool.venue_id is not None:
        hold_venue_tables(pool.venue_id)


def carrusel_tables(pool: Pool) -> QuerySet[CasinoTable] | None:
    """The tables a carrusel of ALL the tables of its game must have (its pack says so), else None."""
    pack = PACKS.get(pool.rule_pack)
    if pack is None or not pack.all_tables:
        return None
    venue_ids = [pool.venue_id] if pool.venue_id else list(pool.network.venues.values_list("pk", flat=True))  # type: ignore[union-attr]
    return CasinoTable.objects.filter(venue_id__in=venue_ids, game=pack.game, rule_pack=pool.rule_pack)


def _check_all_tables(pool: Pool, joining: list[CasinoTable], leaving: CasinoTable | None = None) -> None:
    """Refuse a carrusel over only some of the tables its pack says must all form it (spec §6.2, §6.5,
    §6.12), naming the missing ones."""
    required = carrusel_tables(pool)
    if required is None:
        return
    members = set(
        PoolMember.objects.filter(
            pool=pool, source_type=SourceType.TABLE, removed_at__isnull=True
        ).values_list("source_id", flat=True)
    )
    named = {t.pk for t in joining}
    missing = [
        t
        for t in required.order_by("number")
        if (str(t.pk) not in members and t.pk not in named) or (leaving is not None and t.pk == leaving.pk)
    ]
    if not missing:
        return
    pack = PACKS[pool.rule_pack]
    names = ", ".join(f"{t.number} ({t.name})" for t in missing)
    if leaving is not None:
        raise Conflict(
            _(
                "Pool %(code)s is a carrusel of all the %(game)s tables of the room (%(source)s): "
                "%(table)s cannot leave it; close the table for a while instead (it stays a member)."
            )
            % {
                "code": pool.code,
                "game": TableGame(pack.game).label,
                "source": pack.source,
                "table": leaving,
            },
            code="carrusel_needs_all_tables",
            missing=[t.number for t in missing],
        )
    raise InvalidInput(
        _(
            "Pool %(code)s is a carrusel of all the %(game)s tables of the room (%(source)s): "
            "tables %(missing)s are missing; name them too."
        )
        % {"code": pool.code, "game": TableGame(pack.game).label, "source": pack.source, "missing": names},
        code="carrusel_needs_all_tables",
        missing=[t.number for t in missing],
    )


def check_carrusel_change(pool: Pool, joining: list[CasinoTable], leaving: CasinoTable | None = None) -> None:
    """The all-tables rule checked now, without writing (a four-eyes proposal refused at once when it
    could never apply); the joining or leaving service checks again, under its locks."""
    _check_all_tables(Pool.objects.select_related("network").get(pk=pool.pk), joining, leaving)


def _join_locked(table: CasinoTable, pool: Pool, actor: Actor, *, automatic: bool = False) -> None:
    """join_pool's checks and writes, the table locked by the caller."""
    if table.pool_id is not None:
        raise Conflict(
            _("%(table)s already plays for pool %(pool)s.") % {"table": table, "pool": table.pool},
            code="already_in_pool",
        )
    if pool.rule_pack != table.rule_pack:
        raise InvalidInput(
            _("Pool %(code)s follows %(pool_pack)s, the table %(rule_pack)s.")
            % {
                "code": pool.code,
                "pool_pack": pool.rule_pack or "no rule pack",
                "rule_pack": table.rule_pack,
            },
            code="pool_pack_mismatch",
        )
    if not pool.active:
        raise Conflict(_("Pool %(code)s is closed.") % {"code": pool.code}, code="pool_inactive")
    pack = pool_pack(pool)
    assert pack is not None  # the pool has the table's rule pack
    if pack.paytable.from_authorisation:
        raise Conflict(
            _("Pool %(code)s (%(pack_code)s) has no authorised paytable yet (OP-30).")
            % {"code": pool.code, "pack_code": pack.code},
            code="paytable_awaiting_authorisation",
        )
    if pool.carousel_bet is not None:
        cap = pack.max_pool_bet(table.table_minimum)
        if cap is not None and pool.carousel_bet > cap:
            raise InvalidInput(
                _(
                    "Pool %(code)s's bet %(carousel_bet)s is above %(cap)s, "
                    "half of %(table)s's minimum %(table_minimum)s."
                )
                % {
                    "code": pool.code,
                    "carousel_bet": pool.carousel_bet,
                    "cap": cap,
                    "table": table,
                    "table_minimum": table.table_minimum,
                },
                code="pool_bet_over_limit",
                limit=str(cap),
            )
    pool_services.add_member(
        pool=pool, source_type=SourceType.TABLE, source_id=str(table.pk), venue=table.venue, actor=actor
    )
    table.pool = pool
    table.save(update_fields=["pool"])
    joined = _table_pool(table, pool)
    if automatic:
        joined["automatic"] = True
    record(table, actor, EventType.TABLE_JOINED_POOL, table, joined)


def _table_pool(table: CasinoTable, pool: Pool) -> TablePool:
    return TablePool(table=table.pk, table_number=table.number, pool=pool.pk, pool_code=pool.code)


def _formed_carrusel(table: CasinoTable) -> Pool | None:
    """The carrusel a new table must join: an open pool of the venue on the table's pack, one of ALL the
    tables of its game, already formed (with a table)."""
    pack = PACKS[table.rule_pack]
    if not pack.all_tables or pack.game != table.game:
        return None
    return (
        Pool.objects.filter(
            venue_id=table.venue_id,
            rule_pack=table.rule_pack,
            active=True,
            members__source_type=SourceType.TABLE,
            members__removed_at__isnull=True,
        )
        .order_by("pk")
        .first()
    )


def leave_pool(*, table: CasinoTable, actor: Actor) -> CasinoTable:
    """The table stops contributing (e.g. after its last announced hand, spec §6.15); the pool stays."""
    with transaction.atomic():
        table = lock_table(table.pk)
        if table.pool is None:
            raise Conflict(_("%(table)s plays for no pool.") % {"table": table}, code="no_pool")
        open_hand = _open_hand(table)
        if open_hand is not None:
            raise Conflict(
                _("Hand %(number)s is open at %(table)s: settle or void it first.")
                % {"number": open_hand.number, "table": table},
                code="hand_open",
            )
        pool = table.pool
        _check_all_tables(pool, [], leaving=table)
        hold_pool(pool.pk)
        pool_services.remove_member(
            pool=pool, source_type=SourceType.TABLE, source_id=str(table.pk), actor=actor
        )
        table.pool = None
        table.save(update_fields=["pool"])
        left = _table_pool(table, pool)
        record(table, actor, EventType.TABLE_LEFT_POOL, table, left)
    return table


def set_table_state(*, table: CasinoTable, state: str, actor: Actor, reason: str = "") -> CasinoTable:
    """Close the table for a while (out of service for the night) or open it again (spec §6.15).

    A closed table takes no hands, so it registers no pool bets and contributes nothing; it stays a member
    of its pool (a carrusel of all the tables of its game still counts it, and it rejoins nothing when it
    opens again) and its meter keeps showing the pool. Closing needs a reason (the audit keeps it) and no
    open hand; closing a closed table or opening an open one is refused (409), so a stale page says so.
    """
    if state not in TableState.values:
        raise InvalidInput(_("Unknown table state %(state)r.") % {"state": state}, code="bad_state")
    reason = " ".join(reason.split())
    if state == TableState.CLOSED and not reason:
        raise InvalidInput(_("Say why the table closes."), code="reason_required")
    if len(reason) > 200:
        raise InvalidInput(_("The reason has at most 200 characters."), code="reason_too_long")
    with transaction.atomic():
        table = lock_table(table.pk)
        if table.state == state:
            raise Conflict(
                _("%(table)s is already closed.") % {"table": table}
                if state == TableState.CLOSED
                else _("%(table)s is already open.") % {"table": table},
                code="already_closed" if state == TableState.CLOSED else "already_open",
            )
        open_hand = _open_hand(table)
        if open_hand is not None:
            raise Conflict(
                _("Hand %(number)s is open at %(table)s: settle or void it first.")
                % {"number": open_hand.number, "table": table},
                code="hand_open",
            )
        old = table.state
        table.state = state
        table.save(update_fields=["state"])
        changed = TableStateChanged(**head(table), old=old, new=state, reason=reason)
        record(table, actor, EventType.TABLE_STATE_CHANGED, table, changed)
    return table
