"""The cashier ledger's tamper evidence: every transaction is sealed in its venue's audit chain (issue 28).

`ledger.post_many` writes, in the transaction that posts, one audit entry per ledger transaction whose
data is `ledger.sealed_data` of it: its key, shift, device, memo, data, time and every leg (account code and
signed amount). The chain is keyed (HMAC, key outside the database) and anchored, so whoever edits the
ledger rows cannot rewrite the entries to match. This module compares the two, inside the verification's
snapshot: each transaction with its entry (a transaction without one was inserted, an entry without its
transaction was deleted or renumbered, a difference was edited), then each account's balance column with
the sum of its legs (a balance edited alone). The first transaction that differs is named, by id and by its
position in the venue's ledger (id order).

Cost: nothing more on the hot paths than the entry `post_many` always wrote (plus its time); the check
streams the venue's transactions, legs and ledger entries once each, in id order, holding in memory only
the entries met before their transaction (concurrent postings append out of id order by a few) and a sum
per account.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.utils.translation import gettext as _

from halls import money
from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import Account, LedgerTransaction, Leg
from halls.cashier.services.ledger import sealed_data
from halls.chains import Anchor, ChainHead, ChainReport
from halls.models import AuditEntry, Venue

KIND = "ledger"  # the chain kind in verify_audit's report (one per venue with a ledger)
OBJECT_TYPE = LedgerTransaction._meta.label_lower  # what the audit entries of the postings name
CHUNK = 2000


def _normalise(data: Mapping[str, Any]) -> Any:
    """As the audit entry stores it (Decimals and dates as JSON strings)."""
    return json.loads(json.dumps(data, cls=DjangoJSONEncoder))


@dataclass(frozen=True)
class Problem:
    tx_id: int | None  # None: an account's balance with no leg at all
    reason: str
    position: int | None = None  # the transaction's position in the venue's ledger (id order), from 1


@dataclass(frozen=True)
class LedgerCheck:
    ok: bool
    transactions: int
    first: Problem | None = None
    problems: int = 0


def _entries(venue_id: int) -> Iterator[tuple[int, str, str, str, Any]]:
    """The venue's ledger entries (id, action, transaction id, actor, data) in chain order."""
    return (
        AuditEntry.objects.filter(venue_id=venue_id, object_type=OBJECT_TYPE)
        .order_by("pk")
        .values_list("pk", "action", "object_id", "actor_label", "data")
        .iterator(chunk_size=CHUNK)
    )


def _transactions(venue_id: int) -> Iterator[tuple[Any, ...]]:
    return (
        LedgerTransaction.objects.filter(venue_id=venue_id)
        .order_by("pk")
        .values_list("pk", "kind", "key", "shift_id", "actor_label", "device", "memo", "data", "created_at")
        .iterator(chunk_size=CHUNK)
    )


def _legs(venue_id: int) -> Iterator[tuple[int, int, int, str, Decimal]]:
    """Every leg of the venue's transactions (transaction, account, the account's venue, code, amount),
    in the order `ledger.check` gave them to the entry: by transaction, then account id."""
    return (
        Leg.objects.filter(transaction__venue_id=venue_id)
        .order_by("transaction_id", "account_id")
        .values_list("transaction_id", "account_id", "account__venue_id", "account__code", "amount")
        .iterator(chunk_size=CHUNK * 3)
    )


def _differences(
    tx: tuple[Any, ...], legs: list[tuple[str, Decimal]], entry: tuple[int, str, str, str, Any]
) -> list[str]:
    """The names of what differs between the transaction's rows and its sealed entry ([] when equal)."""
    _pk, kind, key, shift_id, actor, device, memo, data, created_at = tx
    expected = _normalise(
        sealed_data(
            key=key,
            shift_id=shift_id,
            device=device,
            memo=memo,
            legs=legs,
            data=data or {},
            created_at=created_at,
        )
    )
    sealed = dict(entry[4]) if isinstance(entry[4], dict) else {}
    if "posted_at" not in sealed:  # sealed before the time was: nothing to compare it with
        expected.pop("posted_at", None)
    expected["legs"], sealed["legs"] = _amounts(expected.get("legs")), _amounts(sealed.get("legs"))
    names = sorted(k for k in expected.keys() | sealed.keys() if expected.get(k) != sealed.get(k))
    if entry[1] != f"ledger.{kind}":
        names.insert(0, "kind")
    if entry[3] != actor:
        names.append("actor")
    return names


def _amounts(legs: Any) -> Any:
    """Legs as (code, amount) with the amounts as numbers: an entry sealed before the amounts were written
    in cents ("5" for "5.00") still compares equal."""
    try:
        return [(str(code), Decimal(str(amount))) for code, amount in legs]
    except (TypeError, ValueError, ArithmeticError):
        return legs  # not legs at all: compared as they are, and they differ


def _field_names(names: list[str]) -> str:
    labels = {
        "legs": _("legs"),
        "kind": _("kind"),
        "key": _("key"),
        "actor": _("actor"),
        "posted_at": _("time"),
        "shift": _("shift"),
        "device": _("device"),
        "memo": _("memo"),
    }
    return ", ".join(labels.get(name, name) for name in names)


def check_venue(venue_id: int) -> LedgerCheck:
    """Compare the venue's ledger rows with their sealed entries, then its balances with its legs. Runs
    inside the caller's snapshot (halls.services.audit.snapshot)."""
    pending: dict[int, tuple[int, str, str, str, Any]] = {}  # entries met before their transaction
    entries = _entries(venue_id)
    problems: list[Problem] = []

    def entry_of(tx_id: int) -> tuple[int, str, str, str, Any] | None:
        while tx_id not in pending:
            row = next(entries, None)
            if row is None:
                return None
            found = int(row[2]) if str(row[2]).isdigit() else -1
            if found in pending:  # two entries for one transaction: the first is the posting's
                continue
            pending[found] = row
        return pending.pop(tx_id)

    legs = _legs(venue_id)
    leg = next(legs, None)
    sums: dict[int, Decimal] = {}  # account -> its legs summed (signed)
    last_tx: dict[int, int] = {}  # account -> the last transaction with a leg on it
    count = 0
    for tx in _transactions(venue_id):
        count += 1
        tx_id = tx[0]
        mine: list[tuple[str, Decimal]] = []
        foreign = False
        while leg is not None and leg[0] <= tx_id:
            if leg[0] == tx_id:  # (a leg of no transaction cannot be: the key is enforced)
                mine.append((leg[3], leg[4]))
                foreign |= leg[2] != venue_id
                sums[leg[1]] = sums.get(leg[1], money.ZERO) + leg[4]
                last_tx[leg[1]] = tx_id
            leg = next(legs, None)
        entry = entry_of(tx_id)
        where = {"id": tx_id, "kind": tx[1], "key": tx[2]}
        if entry is None:
            reason = _("transaction %(id)s (%(kind)s %(key)s) has no audit entry: it was inserted") % where
            problems.append(Problem(tx_id, reason, count))
            continue
        names = _differences(tx, mine, entry)
        if foreign and "legs" not in names:
            names.append("legs")
        if names:
            reason = _(
                "transaction %(id)s (%(kind)s %(key)s): its %(fields)s differ from what its audit entry "
                "%(entry)s sealed (edited)"
            ) % {**where, "fields": _field_names(names), "entry": entry[0]}
            problems.append(Problem(tx_id, reason, count))
    for tx_id, entry in sorted(pending.items()) + [
        (int(r[2]) if str(r[2]).isdigit() else -1, r) for r in entries
    ]:
        reason = _(
            "transaction %(id)s, sealed in audit entry %(entry)s, is missing from the ledger (deleted or "
            "renumbered)"
        ) % {"id": tx_id, "entry": entry[0]}
        problems.append(Problem(tx_id, reason))
    problems.extend(_balance_problems(venue_id, sums, last_tx))
    if not problems:
        return LedgerCheck(True, count)
    first = min(problems, key=lambda p: (p.tx_id is None, p.tx_id or 0))
    if first.position is None and first.tx_id is not None:  # where the missing one stood
        before = LedgerTransaction.objects.filter(venue_id=venue_id, pk__lt=first.tx_id).count()
        first = Problem(first.tx_id, first.reason, before + 1)
    return LedgerCheck(False, count, first, len(problems))


def _balance_problems(
    venue_id: int, sums: Mapping[int, Decimal], last_tx: Mapping[int, int]
) -> list[Problem]:
    """Each account whose balance column is not its legs summed (on its normal side)."""
    found = []
    accounts = (
        Account.objects.filter(venue_id=venue_id).order_by("pk").values_list("pk", "code", "kind", "balance")
    )
    for pk, code, kind, balance in accounts.iterator(chunk_size=CHUNK):
        made = ledger.shown(Kind(kind), sums.get(pk, money.ZERO))
        if balance == made:
            continue
        values = {"account": code, "balance": money.text(balance), "made": money.text(made)}
        tx_id = last_tx.get(pk)
        if tx_id is None:
            reason = _("account %(account)s holds %(balance)s with no leg at all (edited)") % values
        else:
            reason = _(
                "account %(account)s holds %(balance)s, its legs make %(made)s: its balance was edited after "
                "transaction %(id)s, the last on it"
            ) % {**values, "id": tx_id}
        found.append(Problem(tx_id, reason))
    return found


def chain_heads() -> list[ChainHead]:
    """No chain of their own: the ledger's seals are entries of the venues' audit chains (anchored there)."""
    return []


def verify_chains(
    venue_ids: list[int] | None, anchors: Mapping[tuple[str, int], Anchor]
) -> list[ChainReport]:
    """Every venue's ledger (of the venues, or all) with a transaction or a sealed entry: one report each."""
    venues = Venue.objects.order_by("pk")
    if venue_ids is not None:
        venues = venues.filter(pk__in=venue_ids)
    reports = []
    for venue in venues:
        if not (
            LedgerTransaction.objects.filter(venue_id=venue.pk).exists()
            or AuditEntry.objects.filter(venue_id=venue.pk, object_type=OBJECT_TYPE).exists()
        ):
            continue
        check = check_venue(venue.pk)
        first = check.first
        reason = ""
        if first is not None:
            more = check.problems - 1
            reason = first.reason + (_(" (and %(more)s more problems)") % {"more": more} if more else "")
        reports.append(
            ChainReport(
                KIND,
                venue.pk,
                venue.name,
                check.ok,
                check.transactions,
                first.position if first else None,
                first.tx_id if first else None,
                reason,
            )
        )
    return reports
