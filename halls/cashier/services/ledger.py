"""Posting to the money ledger: balanced, append-only, idempotent by the caller's key, guarded accounts
never below zero (also when two terminals spend one card at once: the accounts money leaves are locked).

Every cashier service posts through `post`, inside its own transaction; `post` writes the audit entry of
the posting. `post_many` posts a batch of one venue's transactions as `post` would one after the other,
in a fixed number of statements (a ball's prizes, a group of card spends); `post` is a batch of one. The
venue's singleton accounts are made on first use.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.db.models import Case, ExpressionWrapper, F, JSONField, OuterRef, Subquery, Sum, Value, When
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext as _

from halls import i18n, locks, money
from halls.actors import Actor, actor_label
from halls.cashier import ledger
from halls.cashier.ledger import GUARDED, Kind
from halls.cashier.models import (
    AMOUNT_DIGITS,
    Account,
    CashDevice,
    LedgerTransaction,
    Leg,
    Means,
    PlayerCard,
    Shift,
    TxKind,
)
from halls.cashier.services.locks import lock_accounts, lock_and_move_balances, lock_balances
from halls.errors import Conflict
from halls.fields import MoneyField
from halls.services import audit

VENUE_KINDS = (Kind.SALES, Kind.HOUSE, Kind.POOL_FUNDING, Kind.PRIZES_PAYABLE, Kind.TICKETS)


def venue_account(venue_id: int, kind: Kind) -> Account:
    """The venue's one account of `kind` (sales, house, pool funding, prizes payable, tickets)."""
    if kind not in VENUE_KINDS:
        raise ValueError(f"{kind} accounts are per shift or per card, not per venue")
    account, _created = Account.objects.get_or_create(
        venue_id=venue_id, code=kind.value, defaults={"kind": kind.value, "guarded": kind in GUARDED}
    )
    return account


def drawer_code(shift_id: int, means: Means | str) -> str:
    """The code of a shift's drawer for a means of payment (unique in its venue)."""
    return f"drawer:{shift_id}:{means}"


def drawer(shift: Shift, means: Means | str = Means.CASH) -> Account:
    """The shift's drawer for a means of payment (cash, bank card), made on first use."""
    account, _created = Account.objects.get_or_create(
        venue_id=shift.venue_id,
        code=drawer_code(shift.pk, means),
        defaults={"kind": Kind.DRAWER.value, "guarded": True, "shift": shift, "means": str(means)},
    )
    return account


def device_account(device: CashDevice) -> Account:
    """A cash device's stacker: the notes it took and holds until emptied at a till."""
    account, _created = Account.objects.get_or_create(
        venue_id=device.venue_id,
        code=f"device:{device.pk}",
        defaults={"kind": Kind.DEVICE_CASH.value, "guarded": True, "device": device},
    )
    return account


def card_account(card: PlayerCard) -> Account:
    account, _created = Account.objects.get_or_create(
        venue_id=card.venue_id,
        code=f"card:{card.number}",
        defaults={"kind": Kind.PLAYER_CARD.value, "guarded": True, "card": card},
    )
    return account


@dataclass(frozen=True)
class Posted:
    transaction: LedgerTransaction
    replayed: bool  # the key was already posted with the same legs: nothing was written


def _short(account: Account, balance: Decimal, needed: Decimal) -> Conflict:
    """The refusal of a guarded account that would go below zero, in the words of its kind."""
    values = {"account": account.code, "balance": money.text(balance), "needed": money.text(needed)}
    said = {**values, "balance": i18n.amount(balance), "needed": i18n.amount(needed)}
    if account.kind == Kind.DRAWER:
        return Conflict(
            _("The drawer holds %(balance)s: %(needed)s cannot be paid from it.") % said,
            code="drawer_short",
            **values,
        )
    if account.kind == Kind.PLAYER_CARD:
        return Conflict(
            _("The card's balance is %(balance)s: %(needed)s is more than it holds.") % said,
            code="insufficient_balance",
            **values,
        )
    return Conflict(
        _("Account %(account)s holds %(balance)s, less than %(needed)s.") % said,
        code="insufficient_balance",
        **values,
    )


def _same(previous: LedgerTransaction, kind: str, legs: tuple[ledger.Leg, ...]) -> bool:
    stored = sorted((leg.account_id, leg.amount) for leg in previous.legs.all())
    return previous.kind == kind and stored == [(leg.account, leg.amount) for leg in legs]


def _reused(key: str) -> Conflict:
    return Conflict(
        _("Idempotency key %(key)r was used for another operation.") % {"key": key},
        code="idempotency_key_reused",
    )


def replayed(venue_id: int, key: str) -> Posted | None:
    """The transaction already posted under `key`, whatever its legs (for a caller whose legs depend on
    balances that moved since: a device emptied of all it held)."""
    previous = LedgerTransaction.objects.filter(venue_id=venue_id, key=key).first()
    return None if previous is None else Posted(previous, replayed=True)


def posted_under(venue_id: int, keys: Iterable[str]) -> dict[str, LedgerTransaction]:
    """The venue's transactions already posted under `keys`, with their legs: key -> transaction (what
    `post_many` looks up; a group that looked its keys up under its locks hands it over, `looked_up`).
    PostgreSQL: one plain statement when none is (a group of new spends), the rows read only when some are."""
    wanted = sorted(set(keys))
    if not wanted:
        return {}
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_POSTED_SQL, [venue_id, wanted])
            wanted = [key for (key,) in cursor.fetchall()]
        if not wanted:
            return {}
    found = LedgerTransaction.objects.filter(venue_id=venue_id, key__in=wanted).prefetch_related("legs")
    return {t.key: t for t in found}


def venue_account_and_posted(
    venue_id: int, kind: Kind, keys: Iterable[str]
) -> tuple[Account, dict[str, LedgerTransaction]]:
    """`venue_account(venue_id, kind)` and `posted_under(venue_id, keys)`: on PostgreSQL, once the account
    exists, in one statement when no key was posted (a group of new spends: its sales account, read not
    locked, and its keys)."""
    wanted = sorted(set(keys))
    if connection.vendor != "postgresql" or kind not in VENUE_KINDS:
        return venue_account(venue_id, kind), posted_under(venue_id, wanted)
    found = (
        Account.objects.filter(venue_id=venue_id, code=kind.value)
        .annotate(posted=RawSQL(_POSTED_KEYS_SQL, [venue_id, wanted], output_field=JSONField()))  # noqa: S611
        .first()
    )
    if found is None:  # the venue's first posting of the kind makes its account
        return venue_account(venue_id, kind), posted_under(venue_id, wanted)
    posted: list[str] = found.posted  # the annotation
    return found, posted_under(venue_id, posted) if posted else {}


_POSTED_KEYS_SQL = f"""
SELECT coalesce(jsonb_agg(key), '[]'::jsonb) FROM "{LedgerTransaction._meta.db_table}"
WHERE venue_id = %s AND key = ANY(%s::text[])
"""  # noqa: S608 - the model's own table


_POSTED_SQL = f"""
SELECT key FROM "{LedgerTransaction._meta.db_table}" WHERE venue_id = %s AND key = ANY(%s::text[])
"""  # noqa: S608 - the model's own table


@dataclass(frozen=True)
class Posting:
    """One balanced transaction for `post_many`: what `post` takes, but the venue."""

    kind: TxKind
    key: str
    legs: Iterable[ledger.Leg]
    actor: Actor
    shift: Shift | None = None
    device: str = ""
    memo: str = ""
    data: Mapping[str, Any] | None = None


def post(
    *,
    venue_id: int,
    kind: TxKind,
    key: str,
    legs: Iterable[ledger.Leg],
    actor: Actor,
    shift: Shift | None = None,
    device: str = "",
    memo: str = "",
    data: Mapping[str, Any] | None = None,
) -> Posted:
    """Post one balanced transaction (legs on account ids), or answer the one already posted under `key`.

    Raises `Conflict` (drawer_short / insufficient_balance) when a guarded account would go below zero,
    and `Conflict` (idempotency_key_reused) when `key` was posted with other legs. Writes nothing then.
    """
    posting = Posting(kind, key, legs, actor, shift, device, memo, data)
    return post_many(venue_id=venue_id, postings=[posting])[0]


# An audit entry of the caller's (halls.services.audit.record_many): actor, action, object, data.
AuditItem = tuple[Actor, str, Any, dict[str, Any] | None]


def post_many(
    *,
    venue_id: int,
    postings: Sequence[Posting],
    audit_first: Sequence[AuditItem] = (),
    held: Mapping[int, Account] | None = None,
    then: Callable[[list[Posted]], None] | None = None,
    new_keys: bool = False,
    looked_up: Mapping[str, LedgerTransaction] | None = None,
) -> list[Posted]:
    """Post several balanced transactions of one venue as `post` would post them one after the other, in
    one go: their accounts read once, the guarded ones money leaves locked once (id order), their keys
    looked up once, the transactions and legs inserted in bulk, each account's balance moved once by its
    summed delta, one audit append of an entry per transaction. Answers a `Posted` per posting, in order
    (a key already posted, or posted earlier in the batch, with the same legs: replayed).

    All or nothing: a guarded account that would go below zero at any posting (in the batch's order)
    refuses the whole batch as `post` refuses one (drawer_short / insufficient_balance), a key posted with
    other legs too (idempotency_key_reused); nothing is written then.

    `audit_first`: the caller's own entries of the same change (a ball and the prizes it decided), written
    before the transactions' in the same append (written alone when every posting is a replay).

    `held`: every account the legs name, as the caller's transaction read them, those money leaves locked
    by it (halls.locks: their balances are current), and that transaction holds what makes the keys its
    own to post (a terminal's purchases, under the terminal's lock). Then nothing is read or locked again
    and no savepoint is taken: a database error fails the caller's transaction (a group of purchases).

    `new_keys` (with `held`): the caller's locks make the keys new as well as its own (a ball step's prizes,
    under the game's lock and its ball's ordinal): they are not looked up (the keys' unique constraint
    still refuses a duplicate, failing the caller's transaction), and the balances moved are those of
    accounts `held` locks (a credited one too), not locked again.

    `looked_up` (with `held`): the caller's transaction looked the keys up already, under the locks that
    make them its own (`posted_under`, after its locks): they are not looked up again.

    `then(answers)`: the caller's own rows of the same change, written once the transactions and legs are,
    before the venue's shared rows (the accounts' balances, the audit chain's head) are taken, so those are
    held the shortest time (two groups of one venue wait for each other there).
    """
    checked = [ledger.check(p.legs) for p in postings]
    if not postings:
        return []
    if held is not None:
        return _post_held(venue_id, postings, checked, held, audit_first, then, new_keys, looked_up)
    if new_keys or looked_up is not None:
        raise ValueError("post_many(new_keys / looked_up) posts on accounts the caller holds (held=...)")
    with transaction.atomic():
        ids = {leg.account for legs in checked for leg in legs}
        accounts = {a.pk: a for a in Account.objects.filter(pk__in=ids)}
        if len(accounts) != len(ids) or any(a.venue_id != venue_id for a in accounts.values()):
            raise ValueError(f"ledger legs on accounts outside venue {venue_id}: {checked}")
        deltas = _deltas(checked, accounts)
        # Money leaves these: lock them, so two spends of one card are decided one after the other.
        locked = lock_accounts(_taking(deltas, accounts))
        while True:
            done = _post_fresh(venue_id, postings, checked, deltas, accounts, locked, audit_first, then)
            if done is not None:
                return done


def _deltas(
    checked: list[tuple[ledger.Leg, ...]], accounts: Mapping[int, Account]
) -> list[dict[int, Decimal]]:
    return [
        {leg.account: ledger.shown(Kind(accounts[leg.account].kind), leg.amount) for leg in legs}
        for legs in checked
    ]


def _taking(deltas: list[dict[int, Decimal]], accounts: Mapping[int, Account]) -> set[int]:
    """The guarded accounts money leaves."""
    return {pk for d in deltas for pk, delta in d.items() if delta < 0 and accounts[pk].guarded}


def _post_held(
    venue_id: int,
    postings: Sequence[Posting],
    checked: list[tuple[ledger.Leg, ...]],
    held: Mapping[int, Account],
    audit_first: Sequence[AuditItem],
    then: Callable[[list[Posted]], None] | None,
    new_keys: bool = False,
    looked_up: Mapping[str, LedgerTransaction] | None = None,
) -> list[Posted]:
    """`post_many` in the caller's transaction, on the accounts it read and holds (see `held`)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("post_many(held=...) runs inside the caller's transaction")
    ids = {leg.account for legs in checked for leg in legs}
    if not ids <= held.keys() or any(held[pk].venue_id != venue_id for pk in ids):
        raise ValueError(f"ledger legs on accounts not held in venue {venue_id}: {checked}")
    deltas = _deltas(checked, held)
    taking = _taking(deltas, held)
    if not locks.holds(locks.Rank.ACCOUNT, taking):
        raise ValueError(f"post_many(held=...) takes money from accounts not locked: {sorted(taking)}")
    if new_keys and not locks.holds(locks.Rank.ACCOUNT, ids):
        raise ValueError(f"post_many(new_keys=True) moves accounts not locked: {sorted(ids)}")
    done = _post_fresh(
        venue_id,
        postings,
        checked,
        deltas,
        held,
        {pk: held[pk] for pk in taking},
        audit_first,
        then,
        race=False,
        new_keys=new_keys,
        looked_up=looked_up,
    )
    if done is None:  # cannot happen: the caller's locks make the keys its own
        raise IntegrityError(
            f"post_many(held=...): a key of venue {venue_id} was posted by another transaction"
        )
    return done


def _post_fresh(
    venue_id: int,
    postings: Sequence[Posting],
    checked: list[tuple[ledger.Leg, ...]],
    deltas: list[dict[int, Decimal]],
    accounts: Mapping[int, Account],
    locked: Mapping[int, Account],
    audit_first: Sequence[AuditItem],
    then: Callable[[list[Posted]], None] | None,
    *,
    race: bool = True,
    new_keys: bool = False,
    looked_up: Mapping[str, LedgerTransaction] | None = None,
) -> list[Posted] | None:
    """Replay the keys already posted, write the rest; None when another call posted one of the keys at
    this instant (the caller looks again: it is a replay now). `race=False`: no other call can (the
    caller's locks make the keys its own), so no savepoint guards the insert."""
    keys = [p.key for p in postings]
    if new_keys:
        previous: Mapping[str, LedgerTransaction] = {}
    elif looked_up is not None:
        mine = set(keys)
        previous = {key: t for key, t in looked_up.items() if key in mine}
    else:
        previous = posted_under(venue_id, keys)
    first: dict[str, int] = {}  # key -> the posting of the batch that writes it
    for i, (posting, legs) in enumerate(zip(postings, checked, strict=True)):
        earlier = first.setdefault(posting.key, i)
        if posting.key in previous:
            if not _same(previous[posting.key], posting.kind, legs):
                raise _reused(posting.key)
        elif earlier != i and (postings[earlier].kind, checked[earlier]) != (posting.kind, legs):
            raise _reused(posting.key)
    fresh = [i for key, i in first.items() if key not in previous]
    balances = {pk: account.balance for pk, account in locked.items()}
    for i in fresh:
        for pk in locked.keys() & deltas[i].keys():
            if balances[pk] + deltas[i][pk] < 0:
                raise _short(accounts[pk], balances[pk], -deltas[i][pk])
            balances[pk] += deltas[i][pk]
    now = timezone.now()
    rows = [
        LedgerTransaction(
            venue_id=venue_id,
            kind=postings[i].kind,
            key=postings[i].key,
            shift=postings[i].shift,
            actor=_user(postings[i].actor),
            actor_label=actor_label(postings[i].actor),
            device=postings[i].device,
            created_at=now,
            memo=postings[i].memo,
            data=dict(postings[i].data or {}),
            leg_count=len(checked[i]),
        )
        for i in fresh
    ]
    if rows:
        try:
            # a savepoint: one of the keys posted at this instant by another call
            with transaction.atomic() if race else contextlib.nullcontext():
                _insert(rows, [checked[i] for i in fresh])
        except IntegrityError:
            if (
                not race
                or not LedgerTransaction.objects.filter(
                    venue_id=venue_id, key__in=[r.key for r in rows]
                ).exists()
            ):
                raise
            return None
    written = {row.key: row for row in rows}
    answers = [
        Posted(previous[p.key], replayed=True)
        if p.key in previous
        else Posted(written[p.key], replayed=first[p.key] != i)
        for i, p in enumerate(postings)
    ]
    if then is not None:
        then(answers)
    # The venue's shared rows from here to the commit: its accounts' balances (its sales account, a
    # drawer) and its audit chain's head.
    if rows:
        _move_balances([deltas[i] for i in fresh], held=new_keys)
    audit.append_many(  # nothing when there is nothing new to tell
        venue_id=venue_id,
        entries=[
            *audit_first,
            *(
                _audit_entry(postings[i], checked[i], row, accounts)
                for row, i in zip(rows, fresh, strict=True)
            ),
        ],
    )
    return answers


def _insert(rows: list[LedgerTransaction], legs: list[tuple[ledger.Leg, ...]]) -> None:
    """Insert the transactions (their ids set) and their legs. PostgreSQL: one statement for them all, the
    rows as one JSON text (a group of card spends: the ORM's bulk inserts, a model and a parameter per
    column of each row, cost more CPU than the rest of the group)."""
    if connection.vendor != "postgresql":
        LedgerTransaction.objects.bulk_create(rows)
        Leg.objects.bulk_create(
            Leg(transaction=row, account_id=leg.account, amount=leg.amount)
            for row, mine in zip(rows, legs, strict=True)
            for leg in mine
        )
        return
    first = rows[0]
    txs = [
        [
            *(row.kind, row.key, row.shift_id, row.actor_id, row.actor_label),
            *(row.device, row.memo, row.data, row.leg_count, n),
        ]
        for n, row in enumerate(rows)
    ]
    moved = [
        [row.key, leg.account, str(leg.amount)] for row, mine in zip(rows, legs, strict=True) for leg in mine
    ]
    with connection.cursor() as cursor:
        cursor.execute(_INSERT_SQL, [first.venue_id, first.created_at, json.dumps(txs), json.dumps(moved)])
        ids = {key: pk for pk, key in cursor.fetchall()}
    for row in rows:
        row.pk = ids[row.key]
        row._state.adding, row._state.db = False, connection.alias


# The transactions of one post_many (one venue, one time) in their order, then their legs by key: each row a
# JSON array of the columns, all of them one parameter.
_INSERT_SQL = f"""
WITH tx AS (
    INSERT INTO "{LedgerTransaction._meta.db_table}" (venue_id, created_at, kind, key, shift_id, actor_id,
        actor_label, device, memo, data, leg_count)
    SELECT %s, %s, t->>0, t->>1, (t->>2)::bigint, (t->>3)::integer, t->>4, t->>5, t->>6, t->7,
        (t->>8)::smallint
    FROM jsonb_array_elements(%s::jsonb) AS t
    ORDER BY (t->>9)::integer
    RETURNING id, key
), legs AS (
    INSERT INTO "{Leg._meta.db_table}" (transaction_id, account_id, amount)
    SELECT tx.id, (l->>1)::bigint, (l->>2)::numeric
    FROM jsonb_array_elements(%s::jsonb) AS l JOIN tx ON tx.key = l->>0
)
SELECT id, key FROM tx
"""  # noqa: S608 - the models' own tables


def _user(actor: Actor) -> User | None:
    return actor if isinstance(actor, User) else None


def _move_balances(deltas: Iterable[Mapping[int, Decimal]], *, held: bool = False) -> None:
    """Each account's balance moved by its deltas summed, in id order (the order accounts are locked in);
    `held`: the caller's transaction locked them all already."""
    summed: dict[int, Decimal] = {}
    for d in deltas:
        for pk, delta in d.items():
            summed[pk] = summed.get(pk, money.ZERO) + delta
    moved = {pk: delta for pk, delta in summed.items() if delta}
    if not moved:
        return
    # One UPDATE for every account (a CASE on the id), not one per account: a group of purchases moves a
    # card account each and the sales account, and this runs while the venue's books are held. Rows are
    # taken in id order first (as one UPDATE per account took them): the UPDATE's own scan may walk the
    # table in its physical order, and two groups taking shared rows in different orders would deadlock.
    if connection.vendor == "postgresql":
        # The same UPDATE in SQL (the accounts' ids and deltas as two arrays): the ORM's CASE of one WHEN
        # per account cost more CPU to build than the rest of a group of card spends. Not held: the rows
        # locked in id order by the same statement (through their rank, halls.locks.Rank.ACCOUNT).
        if not held:
            lock_and_move_balances(moved)
            return
        ids = sorted(moved)
        with connection.cursor() as cursor:
            cursor.execute(_MOVE_SQL, [ids, [moved[pk] for pk in ids]])
        return
    ids = sorted(moved) if held else lock_balances(moved)  # through its rank (halls.locks.Rank.ACCOUNT)
    money_field: MoneyField[Decimal, Decimal] = MoneyField(max_digits=AMOUNT_DIGITS, decimal_places=2)
    by_account = Case(
        *(When(pk=pk, then=Value(moved[pk], output_field=money_field)) for pk in ids),
        output_field=money_field,
    )
    Account.objects.filter(pk__in=ids).update(balance=F("balance") + by_account)


_MOVE_SQL = f"""
UPDATE "{Account._meta.db_table}" AS account SET balance = account.balance + moved.delta
FROM unnest(%s::bigint[], %s::numeric[]) AS moved (id, delta) WHERE account.id = moved.id
"""  # noqa: S608 - the model's own table


def sealed_data(
    *,
    key: str,
    shift_id: int | None,
    device: str,
    memo: str,
    legs: Iterable[tuple[str, Decimal]],
    data: Mapping[str, Any],
    created_at: datetime,
) -> dict[str, Any]:
    """What a transaction's audit entry seals of it (its kind is the entry's action, its actor the entry's):
    the legs as (account code, signed amount) in account id order, and the row's other columns. The
    verifier (ledger_seals) rebuilds it from the rows and compares."""
    return {
        "key": key,
        "shift": shift_id,
        "device": device,
        "memo": memo,
        "legs": [[code, money.text(amount.quantize(money.CENT))] for code, amount in legs],
        **dict(data),
        "posted_at": created_at.isoformat(),
    }


def _audit_entry(
    posting: Posting, legs: tuple[ledger.Leg, ...], posted: LedgerTransaction, accounts: Mapping[int, Account]
) -> AuditItem:
    return (
        posting.actor,
        f"ledger.{posting.kind}",
        posted,
        sealed_data(
            key=posted.key,
            shift_id=posted.shift_id,
            device=posted.device,
            memo=posted.memo,
            legs=[(accounts[leg.account].code, leg.amount) for leg in legs],
            data=posted.data,
            created_at=posted.created_at,
        ),
    )


@dataclass(frozen=True)
class TrialBalance:
    """The venue's books: every leg summed (zero when balanced), and each kind's shown balance."""

    legs_total: Decimal
    by_kind: dict[str, Decimal]
    # Accounts whose balance column differs from the sum of their legs (none, unless rows were tampered).
    drifted: list[str]

    @property
    def holds(self) -> bool:
        return (
            self.legs_total == 0
            and not self.drifted
            and ledger.trial_balance({Kind(k): v for k, v in self.by_kind.items()}) == 0
        )


def trial_balance(venue_id: int, *, until: datetime | None = None) -> TrialBalance:
    """The venue's books: its legs summed per account kind, as of `until` (the legs of the transactions
    made before it; default: all of them), and the accounts whose balance column is not the sum of their
    legs (checked on the columns as they stand). Three GROUP BY queries, whatever the number of accounts."""
    legs = Leg.objects.filter(account__venue_id=venue_id)
    if until is not None:
        legs = legs.filter(transaction__created_at__lt=until)
    raw = {
        row["account__kind"]: row["total"] or money.ZERO
        for row in legs.values("account__kind").annotate(total=Sum("amount")).order_by()
    }
    by_kind = {kind: ledger.shown(Kind(kind), amount) for kind, amount in sorted(raw.items())}
    return TrialBalance(legs_total=sum(raw.values(), money.ZERO), by_kind=by_kind, drifted=_drifted(venue_id))


def _drifted(venue_id: int) -> list[str]:
    """Codes of the venue's accounts whose balance column differs from their legs (on its normal side)."""
    column: MoneyField[Decimal, Decimal] = MoneyField(max_digits=AMOUNT_DIGITS, decimal_places=2)
    sums = (
        Leg.objects.filter(account=OuterRef("pk"))
        .values("account")
        .annotate(total=Sum("amount"))
        .values("total")[:1]
    )
    accounts = Account.objects.filter(venue_id=venue_id).annotate(
        raw=Coalesce(Subquery(sums, output_field=column), Value(money.ZERO, output_field=column))
    )
    debit_normal = [k.value for k in ledger.DEBIT_NORMAL]
    off = accounts.filter(kind__in=debit_normal).exclude(balance=F("raw")).values_list("code", flat=True)
    # A credit-normal account shows minus its legs: balance + legs is zero.
    credit_off = (
        accounts.exclude(kind__in=debit_normal)
        .annotate(gap=ExpressionWrapper(F("balance") + F("raw"), output_field=column))
        .exclude(gap=0)
        .values_list("code", flat=True)
    )
    return sorted([*off, *credit_off])
