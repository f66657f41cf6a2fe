"""Meter reconciliation: each meter snapshot against the plays recorded since the previous one.

Between two snapshots at seqs p < n the machine's coin-in grew by ``coin_in(n) - coin_in(p)`` and its games
by ``games(n) - games(p)``; the plays we recorded with p < seq < n should add up to the same. When seqs are
missing in between (open SequenceGaps), the difference is what the missing messages carried: the gaps are
reconciled from the snapshot (closed, with the missing coin-in and games) and the missing coin-in is
contributed to the pool ONCE (key ``machine:<id>:gap:<gap id>``), so the pool follows the machine's meters.
A late seq inside a reconciled gap is then refused (it was counted). A difference without a gap, or one
that does not add up (meters going backwards, coin-in without games), raises a ``meter_mismatch`` alert.

Gaps before a machine's first snapshot have nothing to compare with: they are closed with a note and
nothing is contributed for them. A snapshot arriving late (inside an open gap) is stored, not reconciled.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db import connection
from django.db.models import Count, Sum
from django.db.models.functions import Coalesce

from halls.fields import from_db
from machines.models import AlertKind, Machine, MachineAlert, MeterSnapshot, Play, SequenceGap

ZERO = Decimal("0.00")


@dataclass(frozen=True)
class Reconciled:
    gap_ids: frozenset[int]  # the gaps this snapshot closed
    contribution: tuple[int, Decimal] | None  # (gap id, missing coin-in) for the pool, once
    # The "machine.gap_reconciled" audit data, which the gateway records after the pool's locks (their
    # rank comes before the audit head's, halls.locks).
    audit: dict[str, Any] | None = None


def _alert(machine: Machine, kind: str, message: str, at: datetime) -> None:
    MachineAlert.objects.create(machine=machine, kind=kind, message=message[:300], raised_at=at)


def reconcile_snapshot(*, machine: Machine, snapshot: MeterSnapshot, at: datetime) -> Reconciled:
    """Inside the gateway's transaction (the machine row locked), for a snapshot that arrived in order."""
    gaps = list(
        SequenceGap.objects.filter(
            machine=machine, reconciled_at__isnull=True, last_missing__lt=snapshot.seq
        ).order_by("first_missing")
    )
    previous = MeterSnapshot.objects.filter(machine=machine, seq__lt=snapshot.seq).order_by("-seq").first()
    if previous is None:
        for gap in gaps:
            gap.reconciled_at = at
            gap.snapshot = snapshot
            gap.note = "Before the machine's first meter snapshot: nothing to reconcile against."
            gap.save(update_fields=["reconciled_at", "snapshot", "note"])
        _clear_gap_alerts(machine, at, gaps)
        return Reconciled(frozenset(g.pk for g in gaps), None)

    totals = Play.objects.filter(machine=machine, seq__gt=previous.seq, seq__lt=snapshot.seq).aggregate(
        bets=Coalesce(Sum("bet"), ZERO), plays=Count("id")
    )
    coin_in = snapshot.coin_in - previous.coin_in
    games = snapshot.games_played - previous.games_played
    missing_in: Decimal = coin_in - totals["bets"]
    missing_games: int = games - totals["plays"]
    interval = f"seqs {previous.seq}-{snapshot.seq}"
    consistent = missing_in >= 0 and missing_games >= 0 and (missing_in > 0) == (missing_games > 0)

    if not gaps:
        if missing_in or missing_games:
            _alert(
                machine,
                AlertKind.METER_MISMATCH,
                f"Meters {interval}: coin-in +{coin_in} against {totals['bets']} in recorded plays, games "
                f"+{games} against {totals['plays']} plays, and no seq is missing.",
                at,
            )
        return Reconciled(frozenset(), None)

    if not consistent:
        _alert(
            machine,
            AlertKind.METER_MISMATCH,
            f"Meters {interval}: {missing_in} coin-in and {missing_games} games unaccounted for "
            "do not fit the missing seqs.",
            at,
        )
    first = gaps[0]
    for gap in gaps:
        gap.reconciled_at = at
        gap.snapshot = snapshot
        if gap is first:
            gap.missing_coin_in = max(missing_in, ZERO)
            gap.missing_games = max(missing_games, 0)
            notes = [f"Reconciled from meters {interval}."]
            if not consistent:
                notes.append("The meters do not fit: see the meter_mismatch alert.")
            if len(gaps) > 1:
                notes.append(f"Counts every gap of the interval ({len(gaps)}).")
        else:
            gap.missing_coin_in = ZERO
            gap.missing_games = 0
            notes = [f"Reconciled from meters {interval}, counted with gap #{first.pk}."]
        if gap.first_missing <= previous.seq:
            notes.append(f"Only the part after seq {previous.seq} is counted here.")
        gap.note = " ".join(notes)[:300]
        gap.save(update_fields=["reconciled_at", "snapshot", "missing_coin_in", "missing_games", "note"])
    _clear_gap_alerts(machine, at, gaps)
    contribution = (first.pk, missing_in) if missing_in > 0 else None
    audit = {
        "machine": machine.pk,
        "asset_number": machine.asset_number,
        "gaps": [[g.pk, g.first_missing, g.last_missing] for g in gaps],
        "from_seq": previous.seq,
        "to_seq": snapshot.seq,
        "missing_coin_in": missing_in,
        "missing_games": missing_games,
        "contributed": missing_in if contribution else ZERO,
    }
    return Reconciled(frozenset(g.pk for g in gaps), contribution, audit)


def _clear_gap_alerts(machine: Machine, at: datetime, closed: list[SequenceGap]) -> None:
    if not closed:
        return
    if not SequenceGap.objects.filter(machine=machine, reconciled_at__isnull=True).exists():
        MachineAlert.objects.filter(
            machine=machine, kind=AlertKind.SEQUENCE_GAP, cleared_at__isnull=True
        ).update(cleared_at=at)


# --- the report ------------------------------------------------------------------------------------------

_RECENT = """
WITH s AS (
    SELECT id, seq, coin_in, games_played, taken_at,
           LAG(seq) OVER w AS prev_seq, LAG(coin_in) OVER w AS prev_coin_in,
           LAG(games_played) OVER w AS prev_games, LAG(taken_at) OVER w AS prev_at
    FROM machines_metersnapshot WHERE machine_id = %(machine)s
    WINDOW w AS (ORDER BY seq)
), recent AS (SELECT * FROM s ORDER BY seq DESC LIMIT %(limit)s)
SELECT recent.id, recent.seq, recent.coin_in, recent.games_played, recent.taken_at,
       recent.prev_seq, recent.prev_coin_in, recent.prev_games, recent.prev_at,
"""
# The plays recorded strictly between the previous snapshot and this one.
_BETWEEN = """FROM machines_play p
    WHERE p.machine_id = %(machine)s AND p.seq > COALESCE(recent.prev_seq, 0) AND p.seq < recent.seq"""
_REPORT_SQL = f"""{_RECENT}       agg.bets, agg.plays
FROM recent
CROSS JOIN LATERAL (SELECT COALESCE(SUM(p.bet), 0) AS bets, COUNT(*) AS plays {_BETWEEN}) agg
ORDER BY recent.seq
"""
# SQLite has no LATERAL: the same sums as two correlated subqueries per snapshot row.
_REPORT_SQL_SQLITE = (
    _RECENT
    + f"       (SELECT COALESCE(SUM(p.bet), 0) {_BETWEEN}) AS bets,\n"
    + f"       (SELECT COUNT(*) {_BETWEEN}) AS plays\n"
    + "FROM recent\nORDER BY recent.seq\n"
)


def _gap_dict(gap: SequenceGap) -> dict[str, Any]:
    return {
        "id": gap.pk,
        "first_missing": gap.first_missing,
        "last_missing": gap.last_missing,
        "detected_at": gap.detected_at,
        "reconciled_at": gap.reconciled_at,
        "missing_coin_in": gap.missing_coin_in,
        "missing_games": gap.missing_games,
        "note": gap.note,
    }


def _report_rows(machine: Machine, limit: int) -> list[tuple[Any, ...]]:
    """The report's rows as the ORM would type them: SQLite hands raw SQL money back as integer units
    (halls.fields) and times as text; PostgreSQL already gives Decimal and datetime."""
    sqlite = connection.vendor == "sqlite"
    with connection.cursor() as cursor:
        cursor.execute(_REPORT_SQL_SQLITE if sqlite else _REPORT_SQL, {"machine": machine.pk, "limit": limit})
        rows: list[tuple[Any, ...]] = cursor.fetchall()
    if not sqlite:
        return rows
    coin_in = MeterSnapshot._meta.get_field("coin_in")
    bet = Play._meta.get_field("bet")
    ops = connection.ops

    def at(value: Any) -> datetime | None:
        return ops.convert_datetimefield_value(value, None, connection)  # type: ignore[attr-defined, no-any-return]

    return [
        (
            snap_id,
            seq,
            from_db(coin_in, in_now, connection),
            games,
            at(taken),
            prev_seq,
            from_db(coin_in, in_before, connection),
            prev_games,
            at(prev_at),
            from_db(bet, bets, connection),
            plays,
        )
        for snap_id, seq, in_now, games, taken, prev_seq, in_before, prev_games, prev_at, bets, plays in rows
    ]


def reconciliation(machine: Machine, *, limit: int = 200) -> list[dict[str, Any]]:
    """The machine's last `limit` snapshot intervals, oldest first, then the plays since the last snapshot:
    coin-in and games by the meters against the plays recorded, the gaps reconciled in each interval and
    a status: ``first`` (no earlier snapshot), ``ok``, ``gap_reconciled``, ``mismatch``, ``open`` (since
    the last snapshot; open gaps listed there)."""
    rows = _report_rows(machine, limit)
    gaps_by_snapshot: dict[int | None, list[dict[str, Any]]] = {}
    for gap in SequenceGap.objects.filter(machine=machine).filter(
        snapshot_id__in=[r[0] for r in rows]
    ) | SequenceGap.objects.filter(machine=machine, reconciled_at__isnull=True):
        gaps_by_snapshot.setdefault(gap.snapshot_id, []).append(_gap_dict(gap))
    report = []
    for (
        snap_id,
        seq,
        coin_in,
        games,
        taken_at,
        prev_seq,
        prev_coin_in,
        prev_games,
        prev_at,
        bets,
        plays,
    ) in rows:
        gaps = sorted(gaps_by_snapshot.get(snap_id, []), key=lambda g: g["first_missing"])
        if prev_seq is None:
            delta_in = delta_games = diff_in = diff_games = None
            status = "first"
        else:
            delta_in = coin_in - prev_coin_in
            delta_games = games - prev_games
            diff_in = delta_in - bets
            diff_games = delta_games - plays
            counted_in = sum((g["missing_coin_in"] or ZERO for g in gaps), ZERO)
            counted_games = sum((g["missing_games"] or 0 for g in gaps), 0)
            if not diff_in and not diff_games:
                status = "ok"
            elif gaps and (diff_in, diff_games) == (counted_in, counted_games):
                status = "gap_reconciled"
            else:
                status = "mismatch"
        report.append(
            {
                "snapshot": snap_id,
                "from_seq": prev_seq,
                "to_seq": seq,
                "from_at": prev_at,
                "to_at": taken_at,
                "coin_in": coin_in,
                "games_played": games,
                "coin_in_delta": delta_in,
                "bets_recorded": bets,
                "coin_in_difference": diff_in,
                "games_delta": delta_games,
                "plays_recorded": plays,
                "games_difference": diff_games,
                "gaps": gaps,
                "status": status,
            }
        )
    last_seq = rows[-1][1] if rows else 0
    since = Play.objects.filter(machine=machine, seq__gt=last_seq).aggregate(
        bets=Coalesce(Sum("bet"), ZERO), plays=Count("id")
    )
    report.append(
        {
            "snapshot": None,
            "from_seq": last_seq or None,
            "to_seq": None,
            "from_at": rows[-1][4] if rows else None,
            "to_at": None,
            "coin_in": None,
            "games_played": None,
            "coin_in_delta": None,
            "bets_recorded": since["bets"],
            "coin_in_difference": None,
            "games_delta": None,
            "plays_recorded": since["plays"],
            "games_difference": None,
            "gaps": sorted(gaps_by_snapshot.get(None, []), key=lambda g: g["first_missing"]),
            "status": "open",
        }
    )
    return report
