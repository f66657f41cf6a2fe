"""`post_many`: a batch of transactions posted in one go is what posting them one by one would leave (the
same balances, legs and audit entries, the same replays), or, when one of them is refused, nothing at all.

The property (hypothesis, derandomized) posts one random batch of card spends, cash-ins, prizes awarded
to cards or to prizes payable and payouts, with keys repeated inside the batch and keys posted before it,
one by one in one venue and through `post_many` in a twin venue, and compares the two venues' books (or,
when posting them one by one meets a refusal, checks that `post_many` refused and wrote nothing).
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import Account, LedgerTransaction, Leg, PlayerCard, TxKind
from halls.cashier.services import ledger as books
from halls.cashier.services.locks import lock_accounts
from halls.errors import Conflict
from halls.models import AuditEntry, Jurisdiction, Venue
from halls.services import audit

D = Decimal
EXAMPLES = int(os.environ.get("HALL_LEDGER_EXAMPLES", "20"))
_venues = itertools.count(1)
_cards = itertools.count(1)

amounts = st.decimals(min_value=D("0.01"), max_value=D("30.00"), places=2)


@dataclass(frozen=True)
class Op:
    """One posting of the batch, on the card accounts by position (the same in both venues)."""

    what: str  # spend | cash_in | award | award_payable | payout
    cards: tuple[int, ...]
    amount: Decimal


ops = st.builds(
    Op,
    what=st.sampled_from(["spend", "cash_in", "award", "award_payable", "payout"]),
    cards=st.lists(st.integers(0, 2), min_size=1, max_size=3).map(tuple),
    amount=amounts,
)


class Books:
    """A venue with three funded player cards and its singleton accounts."""

    def __init__(self, funds: list[Decimal]) -> None:
        n = next(_venues)
        self.venue = Venue.objects.create(
            name=f"PM{n}", licence_number=f"POSTMANY-{n}", jurisdiction=Jurisdiction.ML
        )
        self.cards = [
            books.card_account(
                PlayerCard.objects.create(
                    venue=self.venue, number=f"7{next(_cards):011d}", created_at=timezone.now()
                )
            ).pk
            for _ in funds
        ]
        self.sales = books.venue_account(self.venue.pk, Kind.SALES).pk
        self.house = books.venue_account(self.venue.pk, Kind.HOUSE).pk
        self.funding = books.venue_account(self.venue.pk, Kind.POOL_FUNDING).pk
        self.payable = books.venue_account(self.venue.pk, Kind.PRIZES_PAYABLE).pk
        for i, amount in enumerate(funds):
            books.post(
                **self.posting(f"fund:{i}", Op("cash_in", (i,), amount)).__dict__, venue_id=self.venue.pk
            )
        self.audited = AuditEntry.objects.filter(venue=self.venue).count()
        # The cards' codes by position: the twins' card numbers differ.
        codes = dict(Account.objects.filter(pk__in=self.cards).values_list("pk", "code"))
        self.names = {codes[pk]: f"card{i}" for i, pk in enumerate(self.cards)}

    def named(self, value: Any) -> Any:
        """`value` with the cards' codes in it by position."""
        if isinstance(value, str):
            return self.names.get(value, value)
        if isinstance(value, list | tuple):
            return [self.named(v) for v in value]
        if isinstance(value, dict):
            return {k: self.named(v) for k, v in value.items()}
        return value

    def posting(self, key: str, op: Op) -> books.Posting:
        cards = [self.cards[c] for c in op.cards]
        each, total = op.amount, op.amount * len(cards)
        legs = {
            "spend": [ledger.debit(cards[0], each), ledger.credit(self.sales, each)],
            "cash_in": [ledger.debit(self.house, each), ledger.credit(cards[0], each)],
            "award": [ledger.debit(self.funding, total)] + [ledger.credit(c, each) for c in cards],
            "award_payable": [ledger.debit(self.sales, each), ledger.credit(self.payable, each)],
            "payout": [ledger.debit(self.payable, each), ledger.credit(cards[0], each)],
        }[op.what]
        kinds = {
            "spend": TxKind.CARD_SPEND,
            "cash_in": TxKind.CARD_CASH_IN,
            "award": TxKind.PRIZE_AWARD,
            "award_payable": TxKind.PRIZE_AWARD,
            "payout": TxKind.PRIZE_PAYOUT,
        }
        return books.Posting(
            kind=kinds[op.what], key=key, legs=legs, actor="T1", device="T1", memo=op.what, data={"n": key}
        )

    def state(self) -> dict[str, Any]:
        """The venue's books by codes and keys (ids and times differ between twins)."""
        accounts = Account.objects.filter(venue=self.venue)
        entries = AuditEntry.objects.filter(venue=self.venue).order_by("pk")
        return {
            "balances": {self.named(a.code): a.balance for a in accounts},
            "transactions": {
                t.key: (t.kind, t.memo, t.device, t.data, t.leg_count)
                for t in LedgerTransaction.objects.filter(venue=self.venue)
            },
            "legs": sorted(
                (key, self.named(code), amount)
                for key, code, amount in Leg.objects.filter(transaction__venue=self.venue).values_list(
                    "transaction__key", "account__code", "amount"
                )
            ),
            "audit": [
                (e.action, e.object_type, e.actor_label, self.named(_timeless(e.data)))
                for e in entries[self.audited :]
            ],
        }


def _timeless(data: dict[str, Any]) -> dict[str, Any]:
    """An entry's data without the time it sealed (a ledger transaction's "posted_at")."""
    return {k: v for k, v in data.items() if k != "posted_at"}


def _one_by_one(twin: Books, batch: list[tuple[str, Op]]) -> tuple[list[bool], str | None]:
    """Post the batch with `post`, each its own transaction, up to the first refusal."""
    replays: list[bool] = []
    for key, op in batch:
        try:
            replays.append(books.post(**twin.posting(key, op).__dict__, venue_id=twin.venue.pk).replayed)
        except Conflict as refused:
            return replays, refused.code
    return replays, None


def _at_once(twin: Books, batch: list[tuple[str, Op]]) -> tuple[list[bool], str | None]:
    try:
        posted = books.post_many(venue_id=twin.venue.pk, postings=[twin.posting(k, op) for k, op in batch])
    except Conflict as refused:
        return [], refused.code
    return [p.replayed for p in posted], None


@pytest.mark.django_db
@hypothesis_settings(max_examples=EXAMPLES, deadline=None, derandomize=True)
@given(
    funds=st.lists(amounts, min_size=3, max_size=3),
    batch=st.lists(ops, min_size=1, max_size=8),
    before=st.sets(st.integers(0, 7), max_size=3),
    repeats=st.lists(st.integers(0, 7), max_size=3),
    clash=st.booleans(),
)
def test_post_many_leaves_the_books_posting_one_by_one_would(
    funds: list[Decimal], batch: list[Op], before: set[int], repeats: list[int], clash: bool
) -> None:
    one, many = Books(funds), Books(funds)
    keyed = [(f"op:{i}", op) for i, op in enumerate(batch)]
    for i in sorted(before):  # keys the batch finds posted already (a retried batch)
        if i < len(keyed):
            for twin in (one, many):
                _one_by_one(twin, [keyed[i]])
    keyed += [keyed[i % len(keyed)] for i in repeats]  # keys repeated inside the batch
    if clash:  # a key again with other legs
        key, op = keyed[0]
        keyed.append((key, Op(op.what, op.cards, op.amount + D("0.01"))))
    still = many.state()
    replays_one, refused_one = _one_by_one(one, keyed)
    replays_many, refused_many = _at_once(many, keyed)
    assert (refused_one is None) == (refused_many is None), (refused_one, refused_many)
    if refused_many is not None:
        assert refused_many in ("insufficient_balance", "idempotency_key_reused")
        if not clash:
            assert refused_many == refused_one
        assert many.state() == still, "a refused batch wrote"
        return
    assert replays_one == replays_many
    assert one.state() == many.state()
    for twin in (one, many):
        assert books.trial_balance(twin.venue.pk).holds
        assert audit.verify_chain(twin.venue.pk).ok


@pytest.mark.django_db
def test_a_batch_posted_again_is_replayed_and_writes_nothing() -> None:
    twin = Books([D("10.00"), D("10.00"), D("10.00")])
    batch = [
        twin.posting("a", Op("spend", (0,), D("4.00"))),
        twin.posting("b", Op("award", (1, 2, 1), D("2.50"))),
        twin.posting("a", Op("spend", (0,), D("4.00"))),
    ]
    first = books.post_many(venue_id=twin.venue.pk, postings=batch)
    assert [p.replayed for p in first] == [False, False, True]
    assert first[0].transaction.pk == first[2].transaction.pk
    written = twin.state()
    again = books.post_many(venue_id=twin.venue.pk, postings=batch)
    assert [p.replayed for p in again] == [True, True, True]
    assert [p.transaction.pk for p in again] == [p.transaction.pk for p in first]
    assert twin.state() == written
    assert written["balances"]["card1"] == D("15.00")  # 10.00 and its two shares of 2.50


@pytest.mark.django_db
def test_a_short_card_refuses_the_whole_batch_and_nothing_is_written() -> None:
    twin = Books([D("5.00"), D("5.00"), D("5.00")])
    before = twin.state()
    counts = (LedgerTransaction.objects.count(), Leg.objects.count(), AuditEntry.objects.count())
    batch = [
        twin.posting("ok", Op("spend", (1,), D("5.00"))),
        twin.posting("in", Op("cash_in", (0,), D("1.00"))),
        twin.posting("short", Op("spend", (0,), D("6.01"))),  # 5.00 + 1.00 in the batch: 0.01 short
    ]
    with pytest.raises(Conflict) as refused:
        books.post_many(venue_id=twin.venue.pk, postings=batch)
    assert refused.value.code == "insufficient_balance"
    assert (
        refused.value.details["account"] == f"card:{PlayerCard.objects.get(account__pk=twin.cards[0]).number}"
    )
    assert twin.state() == before
    assert (LedgerTransaction.objects.count(), Leg.objects.count(), AuditEntry.objects.count()) == counts
    # One cent less fits: the cash-in earlier in the batch counts.
    batch[2] = twin.posting("short", Op("spend", (0,), D("6.00")))
    books.post_many(venue_id=twin.venue.pk, postings=batch)
    assert books.trial_balance(twin.venue.pk).holds


@pytest.mark.django_db
def test_a_batch_costs_the_queries_of_one_posting(django_assert_max_num_queries: Any) -> None:
    twin = Books([D("10.00"), D("10.00"), D("10.00")])
    batch = [twin.posting(f"s{i}", Op("spend", (i % 3,), D("1.00"))) for i in range(12)]
    # Its savepoint in the test's transaction, the accounts, their lock, the keys, savepoint + transactions
    # + release, the legs, the balances (their rows locked in id order, then one UPDATE), the audit (2),
    # its release. SQLite appends the audit entries one by one (halls.services.audit.record_many): two
    # statements a posting there, the rest the same.
    cap = 13 if connection.vendor == "postgresql" else 11 + 2 * len(batch)
    with django_assert_max_num_queries(cap):
        books.post_many(venue_id=twin.venue.pk, postings=batch)


@pytest.mark.django_db
def test_on_the_accounts_its_caller_holds_a_batch_posts_the_same_with_fewer_statements(
    django_assert_max_num_queries: Any,
) -> None:
    """`held`: the caller's transaction read every account and locked those money leaves (a group of
    purchases): the books end as posting without it would leave them, with no account read or locked
    again and no savepoint; `then` writes the caller's rows before the venue's shared rows are taken."""
    one, many = Books([D("10.00")] * 3), Books([D("10.00")] * 3)
    ops = [Op("spend", (i % 3,), D("1.50")) for i in range(6)]
    books.post_many(venue_id=one.venue.pk, postings=[one.posting(f"s{i}", op) for i, op in enumerate(ops)])
    seen: list[tuple[list[bool], Decimal]] = []

    def then(posted: list[books.Posted]) -> None:  # the sales account not moved yet
        seen.append(([p.replayed for p in posted], Account.objects.get(pk=many.sales).balance))

    with transaction.atomic():
        held = {**lock_accounts(many.cards), many.sales: Account.objects.get(pk=many.sales)}
        # The transactions' keys, their rows and legs, then the balances (locked in id order, one UPDATE),
        # the audit (2), and `then`'s own read: no account read, no savepoint. SQLite appends the audit
        # entries one by one (two statements each) and takes no row locks.
        cap = 7 + 1 if connection.vendor == "postgresql" else 6 + 2 * len(ops)
        with django_assert_max_num_queries(cap):
            books.post_many(
                venue_id=many.venue.pk,
                postings=[many.posting(f"s{i}", op) for i, op in enumerate(ops)],
                held=held,
                then=then,
            )
    assert seen == [([False] * 6, D("0.00"))]
    assert one.state() == many.state()
    assert audit.verify_chain(many.venue.pk).ok


@pytest.mark.django_db
def test_held_accounts_money_leaves_must_be_locked_by_the_caller() -> None:
    twin = Books([D("10.00")] * 3)
    before = twin.state()
    with transaction.atomic():
        read = {a.pk: a for a in Account.objects.filter(pk__in=[*twin.cards, twin.sales])}  # read, not locked
        with pytest.raises(ValueError, match="not locked"):
            books.post_many(
                venue_id=twin.venue.pk,
                postings=[twin.posting("s", Op("spend", (0,), D("1.00")))],
                held=read,
            )
    assert twin.state() == before


@pytest.mark.django_db
def test_new_keys_post_on_every_account_held_locked_nothing_looked_up_again(
    django_assert_max_num_queries: Any,
) -> None:
    """`new_keys` (a ball step's prizes): the keys are not looked up and the balances not locked again, so
    every account the legs move must be locked by the caller (a credited one too), and the books end as
    posting without it leaves them; a key posted already fails on its unique constraint."""
    one, many = Books([D("10.00")] * 3), Books([D("10.00")] * 3)
    ops = [Op("spend", (i % 3,), D("1.50")) for i in range(4)]
    books.post_many(venue_id=one.venue.pk, postings=[one.posting(f"s{i}", op) for i, op in enumerate(ops)])
    postings = [many.posting(f"s{i}", op) for i, op in enumerate(ops)]
    with transaction.atomic():
        # The sales account, credited, read but not locked.
        read = {**lock_accounts(many.cards), many.sales: Account.objects.get(pk=many.sales)}
        with pytest.raises(ValueError, match="not locked"):
            books.post_many(venue_id=many.venue.pk, postings=postings, held=read, new_keys=True)
    with pytest.raises(ValueError, match="held"):
        books.post_many(venue_id=many.venue.pk, postings=postings, new_keys=True)
    with transaction.atomic():
        held = lock_accounts([*many.cards, many.sales])
        # The transactions' rows and legs, the balances (one UPDATE), the audit (2 on PostgreSQL).
        cap = 5 if connection.vendor == "postgresql" else 4 + 2 * len(ops)
        with django_assert_max_num_queries(cap):
            books.post_many(venue_id=many.venue.pk, postings=postings, held=held, new_keys=True)
    assert one.state() == many.state()
    assert audit.verify_chain(many.venue.pk).ok
    with transaction.atomic():
        held = lock_accounts([*many.cards, many.sales])
        with pytest.raises(IntegrityError), transaction.atomic():
            books.post_many(venue_id=many.venue.pk, postings=postings[:1], held=held, new_keys=True)
    assert one.state() == many.state()
