"""Tamper evidence for the high-volume pool ledger: periodic, hash-chained seals (DESIGN §4).

Chaining every contribution row would serialize the hot path, so a seal (the beat task, every minute)
covers the rows appended since the previous seal: contributions up to each level's fold watermark (no
uncommitted lower id can appear below it), and the settlements, awards, moves and parameter changes
written until then (their writers hold the level locks the fold took). The seal stores the last id per
table, the row counts, a SHA-256 digest of the rows' canonical text in id order, and a hash chained to
the previous seal. `verify` recomputes every seal: an edited, removed or inserted row under a seal, or
an edited seal, breaks it.

The seal chain is keyed: ``hash`` is an HMAC-SHA256 under the audit key (kept outside the database,
``halls.services.audit_keys``; ``alg`` names the key), so whoever edits a row cannot recompute the seals;
seals made before the key keep their plain SHA-256 and verify, but only before the first keyed one. The
head of each pool's chain is anchored outside the database (``halls.services.anchors``) and ``verify``
checks the chain reaches the anchored seal with the same hash: a cut or wiped chain fails. On PostgreSQL
the ledger rows and seals are append-only (triggers, see the models): UPDATE and DELETE are refused.

The contributions are nearly all the rows (a minute of a busy floor is tens of thousands per level). On
PostgreSQL their canonical lines are made by the database, a chunk of CONTRIBUTION_CHUNK rows per query
joined into one text (`_CONTRIBUTION_CHUNK_SQL`), and Python only hashes that text: no model or tuple per
row, no Decimal or datetime formatting in a loop. The lines are the same as the Python ones
(`_lines_contributions`, which SQLite uses): numeric text is Decimal's ``str`` at these scales (6 decimal
places at most: never an exponent), the time is ``isoformat()`` in UTC; a test checks both agree.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.db.models import Max, Q
from django.utils.timezone import now

from halls.chains import Anchor, ChainHead, ChainReport
from halls.services import audit_keys
from halls.services.audit_keys import LEGACY_ALG
from jackpots.models import (
    Award,
    Contribution,
    LedgerMove,
    LedgerSeal,
    ParameterChange,
    Pool,
    PoolSettlement,
)
from jackpots.services import folding
from jackpots.services.locks import lock_levels, lock_pool_for_seal

GENESIS = "0" * 64
TABLES = ("settlements", "awards", "moves", "changes")


def _json(value: Any) -> str:
    return json.dumps(value, cls=DjangoJSONEncoder, sort_keys=True, separators=(",", ":"))


def _iso(value: Any) -> str:
    return value.isoformat() if value is not None else ""


def _lines_contributions(level_id: int, after: int, through: int) -> Iterator[str]:
    rows = (
        Contribution.objects.filter(level_id=level_id, id__gt=after, id__lte=through)
        .order_by("id")
        .values_list(
            "id",
            "level_id",
            "source",
            "bet",
            "to_meter",
            "to_reserve",
            "house",
            "idempotency_key",
            "actor",
            "created_at",
        )
    )
    for r in rows.iterator(chunk_size=5000):
        yield "c|" + "|".join(str(v) for v in r[:-1]) + "|" + _iso(r[-1])


# One chunk of a level's contribution lines, joined by newlines, with its count and last id. Decimal's str
# and PostgreSQL's numeric text agree at scales up to 6 (no exponent); isoformat() of a UTC time is the
# seconds, then ".ffffff" unless the microseconds are 0, then "+00:00".
_CONTRIBUTION_CHUNK_SQL = """
SELECT count(*), max(id), string_agg(line, E'\\n' ORDER BY id)
FROM (
    SELECT id, 'c|' || id || '|' || level_id || '|' || source || '|' || bet || '|' || to_meter || '|'
        || to_reserve || '|' || house || '|' || idempotency_key || '|' || actor || '|'
        || to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')
        || CASE WHEN date_part('microseconds', created_at)::bigint %% 1000000 = 0 THEN ''
                ELSE to_char(created_at AT TIME ZONE 'UTC', '.US') END
        || '+00:00' AS line
    FROM jackpots_contribution
    WHERE level_id = %s AND id > %s AND id <= %s
    ORDER BY id
    LIMIT %s
) chunk
"""
CONTRIBUTION_CHUNK = 20_000


def _lines_in_database() -> bool:
    return connection.vendor == "postgresql"


def _feed_contributions_sql(digest: Any, level_id: int, after: int, through: int) -> int:
    """Hash the level's contribution lines (after, through] as `_lines_contributions` makes them, each
    followed by a newline, chunk by chunk; returns how many."""
    total = 0
    with connection.cursor() as cursor:
        while True:
            cursor.execute(_CONTRIBUTION_CHUNK_SQL, [level_id, after, through, CONTRIBUTION_CHUNK])
            count, last, text = cursor.fetchone()
            if not count:
                return total
            digest.update(text.encode())
            digest.update(b"\n")
            total += int(count)
            if count < CONTRIBUTION_CHUNK:
                return total
            after = last


def _lines_settlements(pool_id: int, after: int, through: int) -> Iterator[str]:
    for s in (
        PoolSettlement.objects.filter(pool_id=pool_id, id__gt=after, id__lte=through)
        .order_by("id")
        .iterator()
    ):
        yield "|".join(
            [
                "s",
                str(s.pk),
                str(s.level_id),
                s.kind,
                s.idempotency_key,
                s.fingerprint,
                _json(s.context),
                str(s.bet),
                str(s.meter_before),
                str(s.meter_after_payouts),
                str(s.meter_after),
                str(s.kept_fraction),
                str(s.reset_from_reserve),
                str(s.operator_seed),
                _iso(s.created_at),
                s.actor,
            ]
        )


def _lines_awards(pool_id: int, after: int, through: int) -> Iterator[str]:
    for a in Award.objects.filter(pool_id=pool_id, id__gt=after, id__lte=through).order_by("id").iterator():
        yield "|".join(
            str(v)
            for v in (
                "a",
                a.pk,
                a.settlement_id,
                a.level_id,
                a.order,
                a.source,
                a.seat,
                a.hand,
                a.category,
                a.discard,
                a.amount,
                a.from_meter,
                a.from_operator,
                a.basis,
                a.note,
                _iso(a.created_at),
            )
        )


def _lines_moves(pool_id: int, after: int, through: int) -> Iterator[str]:
    for m in (
        LedgerMove.objects.filter(pool_id=pool_id, id__gt=after, id__lte=through).order_by("id").iterator()
    ):
        yield "|".join(
            str(v)
            for v in (
                "m",
                m.pk,
                m.level_id,
                m.kind,
                m.amount,
                m.settlement_id,
                m.reason,
                m.authorised_by,
                m.actor,
                _iso(m.created_at),
            )
        )


def _lines_changes(pool_id: int, after: int, through: int) -> Iterator[str]:
    for p in (
        ParameterChange.objects.filter(pool_id=pool_id, id__gt=after, id__lte=through)
        .order_by("id")
        .iterator()
    ):
        yield "|".join(
            [
                "p",
                str(p.pk),
                str(p.level_id),
                _json(p.old),
                _json(p.new),
                p.authorisation_ref,
                p.actor,
                _iso(p.changed_at),
            ]
        )


_LINES = {
    "settlements": _lines_settlements,
    "awards": _lines_awards,
    "moves": _lines_moves,
    "changes": _lines_changes,
}


def _digest(pool_id: int, after: dict[str, Any], through: dict[str, Any]) -> tuple[str, dict[str, int]]:
    digest = hashlib.sha256()
    counts: dict[str, int] = {}

    def feed(name: str, lines: Iterable[str]) -> None:
        n = 0
        for line in lines:
            digest.update(line.encode())
            digest.update(b"\n")
            n += 1
        counts[name] = counts.get(name, 0) + n

    in_sql = _lines_in_database()
    counts["contributions"] = 0
    for level_id in sorted(through["contributions"], key=int):
        bounds = (
            int(level_id),
            int(after["contributions"].get(level_id, 0)),
            int(through["contributions"][level_id]),
        )
        if in_sql:
            counts["contributions"] += _feed_contributions_sql(digest, *bounds)
        else:
            feed("contributions", _lines_contributions(*bounds))
    for name in TABLES:
        feed(name, _LINES[name](pool_id, int(after.get(name, 0)), int(through[name])))
    return digest.hexdigest(), counts


def _chain(prev_hash: str, seal: LedgerSeal, key: bytes | None) -> str:
    """The seal's hash: HMAC-SHA256 under ``key``, or the legacy plain SHA-256 (``key`` None)."""
    fields = {
        "pool": seal.pool_id,
        "seq": seal.seq,
        "through": seal.through,
        "rows": seal.rows,
        "digest": seal.digest,
        "created_at": _iso(seal.created_at),
    }
    if key is None:
        return hashlib.sha256(f"{prev_hash}|{_json(fields)}".encode()).hexdigest()
    body = _json({**fields, "alg": seal.alg})
    return hmac.new(key, f"{prev_hash}|{body}".encode(), hashlib.sha256).hexdigest()


def _empty_through() -> dict[str, Any]:
    return {"contributions": {}, **{name: 0 for name in TABLES}}


def seal(pool: Pool) -> LedgerSeal | None:
    """Fold, then seal what was appended since the last seal; None when nothing was."""
    # 1. Fold under the level locks and read the watermarks (short: contributors wait only for this).
    with transaction.atomic():
        levels = lock_levels(pool.pk)
        folding.fold_locked(pool, levels, actor="system")
        bounds: dict[str, Any] = {"contributions": {str(lv.pk): lv.folded_through for lv in levels}}
        bounds["settlements"] = PoolSettlement.objects.filter(pool=pool).aggregate(m=Max("id"))["m"] or 0
        bounds["awards"] = Award.objects.filter(pool=pool).aggregate(m=Max("id"))["m"] or 0
        bounds["moves"] = LedgerMove.objects.filter(pool=pool).aggregate(m=Max("id"))["m"] or 0
        bounds["changes"] = ParameterChange.objects.filter(pool=pool).aggregate(m=Max("id"))["m"] or 0
    # 2. Hash and chain, serialized per pool on the pool row (contributors never touch it).
    keys = audit_keys.keyring()
    with transaction.atomic():
        lock_pool_for_seal(pool.pk)
        last = LedgerSeal.objects.filter(pool=pool).order_by("-seq").first()
        after = last.through if last else _empty_through()
        through = {
            "contributions": {
                level: max(int(bound), int(after["contributions"].get(level, 0)))
                for level, bound in bounds["contributions"].items()
            },
            **{name: max(int(bounds[name]), int(after.get(name, 0))) for name in TABLES},
        }
        digest, counts = _digest(pool.pk, after, through)
        if not any(counts.values()):
            return None
        row = LedgerSeal(
            pool=pool,
            seq=(last.seq + 1) if last else 1,
            through=through,
            rows=counts,
            digest=digest,
            prev_hash=last.hash if last else GENESIS,
            created_at=now(),
            alg=keys.alg,
        )
        row.hash = _chain(row.prev_hash, row, keys.current)
        row.save()
    return row


@dataclass(frozen=True)
class SealCheck:
    ok: bool
    seals: int
    first_bad_seq: int | None = None
    reason: str = ""


def _seal_key(row: LedgerSeal, prev_alg: str | None, keys: audit_keys.Keyring) -> tuple[bytes | None, str]:
    """The key that must have made the seal's hash (None: legacy), or why it cannot be checked."""
    if row.alg == LEGACY_ALG:
        if prev_alg not in (None, LEGACY_ALG):
            return None, "an unkeyed (plain SHA-256) seal after keyed ones"
        return None, ""
    key = keys.by_alg.get(row.alg)
    if key is None:
        return None, f"sealed with a key this installation does not hold ({row.alg})"
    return key, ""


def verify(pool: Pool, anchor: Anchor | None = None) -> SealCheck:
    """Recompute every seal of the pool, in order: digests over the rows and the hash chain; with the
    pool's latest ``anchor`` (published outside the database), the chain must reach it unchanged."""
    keys = audit_keys.keyring()
    prev_hash, prev_alg = GENESIS, None
    after = _empty_through()
    count = 0
    for row in LedgerSeal.objects.filter(pool=pool).order_by("seq").iterator():
        if row.seq != count + 1 or row.prev_hash != prev_hash:
            return SealCheck(False, count, row.seq, "the chain of seals is broken")
        key, problem = _seal_key(row, prev_alg, keys)
        if problem:
            return SealCheck(False, count, row.seq, problem)
        if _chain(prev_hash, row, key) != row.hash:
            return SealCheck(False, count, row.seq, "the seal was altered")
        if anchor is not None and row.seq == anchor.seq and row.hash != anchor.hash:
            return SealCheck(False, count, row.seq, f"not the seal anchored on {anchor.at} (seals rewritten)")
        digest, counts = _digest(pool.pk, after, row.through)
        if digest != row.digest or counts != row.rows:
            return SealCheck(
                False, count, row.seq, "ledger rows under this seal were altered, added or removed"
            )
        prev_hash, prev_alg, after = row.hash, row.alg, row.through
        count += 1
    if anchor is not None and count < anchor.seq:
        return SealCheck(
            False, count, count + 1,
            f"{count} seals, but seal {anchor.seq} was anchored on {anchor.at}: seals were removed",
        )  # fmt: skip
    return SealCheck(True, count)


def chain_heads() -> list[ChainHead]:
    """Every pool's latest seal, for the anchors (halls.hooks)."""
    latest = (
        LedgerSeal.objects.order_by("pool_id", "-seq").distinct("pool_id").only("pool_id", "seq", "hash")
        if _lines_in_database()
        else None
    )
    rows = latest if latest is not None else _latest_seals_portable()
    return [ChainHead("pool", row.pool_id, row.seq, row.hash) for row in rows]


def link_hash(pool_id: int, seq: int) -> str | None:
    """The hash of the pool's seal number ``seq`` (for the export of chain heads)."""
    return LedgerSeal.objects.filter(pool_id=pool_id, seq=seq).values_list("hash", flat=True).first()


def _latest_seals_portable() -> list[LedgerSeal]:
    last: dict[int, LedgerSeal] = {}
    for row in LedgerSeal.objects.order_by("pool_id", "seq").only("pool_id", "seq", "hash"):
        last[row.pool_id] = row
    return list(last.values())


def verify_chains(
    venue_ids: list[int] | None, anchors: Mapping[tuple[str, int], Anchor]
) -> list[ChainReport]:
    """Every pool's seals (of the venues, or all): one report per pool, inside the caller's snapshot."""
    pools = Pool.objects.order_by("pk")
    if venue_ids is not None:
        pools = pools.filter(Q(venue_id__in=venue_ids) | Q(members__venue_id__in=venue_ids)).distinct()
    reports = []
    for pool in pools:
        anchor = anchors.get(("pool", pool.pk))
        check = verify(pool, anchor)
        reports.append(
            ChainReport(
                "pool",
                pool.pk,
                pool.code,
                check.ok,
                check.seals,
                check.first_bad_seq,
                None,
                f"seal {check.first_bad_seq}: {check.reason}" if not check.ok else "",
                anchored_seq=anchor.seq if anchor else None,
            )
        )
    return reports
