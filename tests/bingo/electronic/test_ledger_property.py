"""Property test over the ledger of electronic games: random interleavings (hypothesis, stateful;
derandomized, so a run is reproducible) of player cards loaded at the till, purchases of electronic cards
(some refused: too little on the card, a blocked card, more than a terminal's cards a game, no game on
sale, a key reused for another purchase; some retried: a no-op), cards blocked and unblocked, and whole
games played (the sales closed, the pools funded, every ball drawn in an order hypothesis chooses, every
prize decided and paid), through the services (`player_cards.cash_in`, `sales.purchase`, `games.close_sales`,
`games.draw_ball`).

A model keeps every account's expected balance: a load moves the drawer to the card, a purchase the card to
the sales, and each prize won what the plain detector (`detector.reference` over the game's cards and
balls) and the prize table (`prizetable.decide`) say: from the sales (the announced amount) or from the
pool's funding (the meter announced at the close of sales), shared to the cent among its winning cards'
player cards. After every step: every transaction balances, no guarded account is negative, the trial
balance holds, and every balance is the model's; a refusal writes nothing in the ledger.
"""

from __future__ import annotations

import itertools
import os
from collections import Counter
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db.models import Count, Sum
from hypothesis import event
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from bingo.electronic.detector import reference
from bingo.electronic.models import ECard, EGameState, ElectronicGame, EPrize, Purchase, Terminal
from bingo.electronic.prizetable import POOL_TYPES, decide, game_over, split, terms_from_json
from bingo.electronic.services import games, sales
from bingo.electronic.services.steps import rules_of
from halls.cashier import ledger
from halls.cashier.ledger import Kind
from halls.cashier.models import Account, LedgerTransaction, Leg, Means, PlayerCard, Till
from halls.cashier.services import ledger as books
from halls.cashier.services import player_cards
from halls.errors import DomainError
from halls.models import Jurisdiction, Role, StaffRole, Venue
from tests.bingo.electronic.support import (
    draw_to_end,
    enqueued,
    forced_balls,
    make_speciality,
    make_terminal,
    open_verified_session,
)
from tests.cashier_support import on_shift

D = Decimal
_runs = itertools.count(1)
EXAMPLES = int(os.environ.get("HALL_ELEDGER_EXAMPLES", "10"))
SEEN: Counter[str] = Counter()
PRICE = D("0.50")
MAX_CARDS = 4
# Line and Bingo from the sales, a figure at a fixed amount, an accumulated prize from its pool.
RULES: dict[str, Any] = {
    "family": "electronic",
    "layout": "90",
    "card_price": str(PRICE),
    "purchase_sizes": [1, 2, 3],
    "max_cards": MAX_CARDS,
    "pace_seconds": "0.5",
    "sale_seconds": 600,
    "pause_seconds": 0,
    "prizes": [
        {"code": "linea", "name": "Línea", "type": "line", "percent": "10"},
        {"code": "bingo", "name": "Bingo", "type": "bingo", "percent": "50"},
        {"code": "esquinas", "name": "Esquinas", "type": "figure", "figure": "corners", "fixed": "0.25"},
        {
            "code": "acumulado",
            "name": "Acumulado",
            "type": "accumulated",
            "pool": {"funding_percent": "5", "reserve_percent": "1", "seed": "3.00"},
            "max_ball": 40,
        },
    ],
}

pick = st.integers(min_value=0, max_value=10**6)
loads = st.decimals(min_value=D("0.01"), max_value=D("3.00"), places=2)


def staff(username: str, venue: Venue, role: str) -> User:
    user = User.objects.create(username=username)
    StaffRole.objects.create(user=user, venue=venue, role=role)
    return user


class ElectronicLedger(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        run = next(_runs)
        self.venue = Venue.objects.create(
            name=f"E{run}", licence_number=f"ELEDGER-{run}", jurisdiction=Jurisdiction.ML
        )
        self.operator = staff(f"e{run}-operator", self.venue, Role.OPERATOR)
        self.cashier = staff(f"e{run}-cashier", self.venue, Role.CASHIER)
        self.shift = on_shift(
            self.cashier, self.venue, till=Till.objects.create(venue=self.venue, name="Caja 1")
        )
        self.speciality = make_speciality(self.venue, self.operator, rules=RULES)
        self.terminals: list[Terminal] = [make_terminal(self.speciality, self.operator)[0] for _ in range(2)]
        open_verified_session(self.speciality, self.operator)
        self.cards: list[PlayerCard] = [
            player_cards.issue_card(venue_id=self.venue.pk, actor=self.cashier) for _ in range(3)
        ]
        self.blocked: set[int] = set()
        self.expected: dict[int, Decimal] = {}  # account id -> its balance as shown
        self.posted = 0
        self.keys = itertools.count(1)
        self.bought: list[tuple[Terminal, PlayerCard, int, str]] = []  # purchases made (for retries)
        with enqueued():
            games.set_running(speciality=self.speciality, running=True, actor=self.operator)
        for i, card in enumerate(self.cards):  # money on the cards to start with (more through load_card)
            self.load(card, D("4.00") * i + D("1.00"))

    def load(self, card: PlayerCard, amount: Decimal) -> DomainError | None:
        """Cash in at the till; the model follows, or the refusal is checked to have written nothing."""
        before = self.ledger_state()
        failure: DomainError | None = None
        try:
            player_cards.cash_in(
                card=card, amount=amount, means=Means.CASH, key=f"load:{next(self.keys)}", actor=self.cashier
            )
        except DomainError as exc:
            failure = exc
        if failure is not None:
            assert card.pk in self.blocked and failure.code == "card_blocked"
            assert self.ledger_state() == before
            return failure
        assert card.pk not in self.blocked
        drawer = books.drawer(self.shift, Means.CASH)
        self.move([ledger.debit(drawer.pk, amount), ledger.credit(books.card_account(card).pk, amount)])
        self.posted += 1
        return None

    # --- the model -------------------------------------------------------------------------------------

    def seen(self, outcome: str) -> None:
        event(outcome)
        SEEN[outcome] += 1

    def move(self, legs: list[ledger.Leg]) -> None:
        kinds = dict(Account.objects.filter(pk__in=[leg.account for leg in legs]).values_list("pk", "kind"))
        for leg in legs:
            shown = ledger.shown(Kind(kinds[leg.account]), leg.amount)
            self.expected[leg.account] = self.expected.get(leg.account, D(0)) + shown

    def balance(self, card: PlayerCard) -> Decimal:
        return self.expected.get(books.card_account(card).pk, D(0))

    def selling(self) -> ElectronicGame | None:
        return ElectronicGame.objects.filter(speciality=self.speciality, state=EGameState.SELLING).first()

    def ledger_state(self) -> tuple[int, int, dict[int, Decimal]]:
        balances = dict(Account.objects.filter(venue=self.venue).values_list("pk", "balance"))
        return LedgerTransaction.objects.filter(venue=self.venue).count(), Leg.objects.count(), balances

    # --- the till --------------------------------------------------------------------------------------

    @rule(c=pick, amount=loads)
    def load_card(self, c: int, amount: Decimal) -> None:
        failure = self.load(self.cards[c % len(self.cards)], amount)
        self.seen(f"load: refused {failure.code}" if failure else "load: done")

    @rule(c=pick, block=st.booleans())
    def block_or_unblock(self, c: int, block: bool) -> None:
        card = PlayerCard.objects.get(pk=self.cards[c % len(self.cards)].pk)
        if block:
            player_cards.block_card(card=card, reason="lost", actor=self.cashier)
            self.blocked.add(card.pk)
        else:
            player_cards.unblock_card(card=card, actor=self.operator)
            self.blocked.discard(card.pk)

    # --- purchases -------------------------------------------------------------------------------------

    @rule(t=pick, c=pick, count=st.sampled_from([1, 2, 3, 4]))
    def purchase(self, t: int, c: int, count: int) -> None:
        terminal, card = self.terminals[t % len(self.terminals)], self.cards[c % len(self.cards)]
        game = self.selling()
        have = sales.cards_of_terminal(terminal, game) if game is not None else 0
        amount = PRICE * count
        if game is None:
            expect = "sales_closed"
        elif count not in (1, 2, 3):
            expect = "bad_count"
        elif have + count > MAX_CARDS:
            expect = "max_cards"
        elif card.pk in self.blocked:
            expect = "card_blocked"
        elif self.balance(card) < amount:
            expect = "insufficient_balance"
        else:
            expect = ""
        key = f"k{next(self.keys)}"
        before, rows = self.ledger_state(), Purchase.objects.count()
        failure: DomainError | None = None
        try:
            bought = sales.purchase(terminal=terminal, card_number=card.number, cards=count, key=key)
        except DomainError as exc:
            failure = exc
        if failure is not None:
            self.seen(f"purchase: refused {failure.code}")
            assert failure.code == expect, (failure.code, expect)
            assert self.ledger_state() == before, "a refused purchase wrote into the ledger"
            assert Purchase.objects.count() == rows
            return
        self.seen("purchase: done")
        assert expect == "", expect
        assert not bought.replayed and len(bought.cards) == count
        sales_account = books.venue_account(self.venue.pk, Kind.SALES)
        self.move(
            [ledger.debit(books.card_account(card).pk, amount), ledger.credit(sales_account.pk, amount)]
        )
        self.posted += 1
        assert bought.balance == self.balance(card)
        self.bought.append((terminal, card, count, key))

    @precondition(lambda self: self.bought)
    @rule(i=pick, same=st.booleans())
    def retry(self, i: int, same: bool) -> None:
        """The same purchase again: the first answer, nothing written; another body: key_reused."""
        terminal, card, count, key = self.bought[i % len(self.bought)]
        before, rows = self.ledger_state(), Purchase.objects.count()
        try:
            again = sales.purchase(
                terminal=terminal, card_number=card.number, cards=count if same else count % 3 + 1, key=key
            )
        except DomainError as exc:
            failure: DomainError | None = exc
        else:
            failure = None
        if failure is not None:
            assert not same and failure.code == "key_reused", failure.code
            self.seen("retry: refused key_reused")
        else:
            assert same and again.replayed
            self.seen("retry: replayed")
        assert self.ledger_state() == before and Purchase.objects.count() == rows

    # --- games -----------------------------------------------------------------------------------------

    @precondition(
        lambda self: Purchase.objects.filter(
            game__speciality=self.speciality, game__state=EGameState.SELLING
        ).exists()
    )
    @rule(order=st.permutations(range(1, 91)), lucky=pick)
    def play_game(self, order: list[int], lucky: int) -> None:
        """Close the sales and draw every ball: in `order`, but a sold card's numbers soon (a game of a few
        cards would otherwise last some 80 balls); the model pays what the rules say."""
        faces = [bytes(c) for c in ECard.objects.filter(game=self.selling()).values_list("cells", flat=True)]
        early = sorted(faces[lucky % len(faces)], key=order.index)
        rest = [n for n in order if n not in early]
        before = lucky % 40  # the lucky card's Bingo at ball 15 to 55 at the latest
        order = rest[:before] + early + rest[before:]
        game = self.selling()
        assert game is not None
        with enqueued(), forced_balls(list(order)):
            closed = games.close_sales(game, early=True)
            assert closed is not None
            game = closed
            if game.state == EGameState.DRAWING:
                game = draw_to_end(game)
        assert game.state == EGameState.CLOSED
        self.seen(f"game: {'played' if game.cards_sold else 'no cards'}")
        if game.cards_sold:
            self.pay_model(game, list(order))
        with enqueued():
            games.start_next_game(self.speciality)

    def pay_model(self, game: ElectronicGame, order: list[int]) -> None:
        rules = rules_of(game.version)
        terms = terms_from_json(game.terms)
        rows = list(ECard.objects.filter(game=game).values_list("pk", "cells", "purchase__player_card_id"))
        faces = {pk: tuple(bytes(cells)) for pk, cells, _ in rows}
        holder = {pk: player for pk, _, player in rows}
        firsts = reference(rules.layout, faces, rules.patterns(), order)
        decided: set[str] = set()
        paid = []
        for ordinal, ball in enumerate(order, start=1):
            completed = {
                key: sorted(c for c, at in done.items() if at == ordinal) for key, done in firsts.items()
            }
            decisions = decide(terms, ordinal=ordinal, ball=ball, completed=completed, decided=decided)
            decided |= {d.code for d in decisions}
            paid += [d for d in decisions if d.won]
            if game_over(terms, ordinal=ordinal, bingo_made=bool(completed.get("full"))):
                assert game.balls_drawn == ordinal
                break
        assert sorted(EPrize.objects.filter(game=game, won=True).values_list("code", flat=True)) == sorted(
            d.code for d in paid
        )
        for decision in paid:
            spec = rules.prize(decision.code)
            if spec.type in POOL_TYPES:
                amount = D(game.terms["meters"][decision.code])  # the meter announced, paid whole when won
                source = books.venue_account(self.venue.pk, Kind.POOL_FUNDING)
            else:
                amount = terms.prize(decision.code).amount or D(0)
                source = books.venue_account(self.venue.pk, Kind.SALES)
            shared = split(amount, len(decision.winners))
            row = EPrize.objects.get(game=game, code=decision.code)
            assert (row.ordinal, row.winners, row.share) == (
                decision.ordinal,
                len(decision.winners),
                shared.share,
            )
            if shared.share == 0:
                continue
            legs = [ledger.debit(source.pk, shared.total(len(decision.winners)))]
            legs += [
                ledger.credit(books.card_account(PlayerCard.objects.get(pk=holder[card])).pk, shared.share)
                for card in decision.winners
            ]
            self.move(legs)
            self.posted += 1
            self.seen(f"prize: {spec.type} paid" + (" (shared)" if len(decision.winners) > 1 else ""))

    def teardown(self) -> None:
        """Every run ends with its game played (when a card was sold) and the books checked after it."""
        if Purchase.objects.filter(game__speciality=self.speciality, game__state=EGameState.SELLING).exists():
            self.play_game(list(range(90, 0, -1)), lucky=len(self.bought))
            self.every_transaction_balances()
            self.no_guarded_account_is_negative()
            self.the_trial_balance_holds()
            self.the_ledger_is_the_model()

    # --- the books -------------------------------------------------------------------------------------

    @invariant()
    def every_transaction_balances(self) -> None:
        unbalanced = (
            Leg.objects.filter(transaction__venue=self.venue)
            .values("transaction")
            .annotate(total=Sum("amount"), n=Count("id"))
            .exclude(total=0)
        )
        assert not list(unbalanced)
        assert LedgerTransaction.objects.filter(venue=self.venue).count() == self.posted

    @invariant()
    def no_guarded_account_is_negative(self) -> None:
        assert not Account.objects.filter(venue=self.venue, guarded=True, balance__lt=0).exists()

    @invariant()
    def the_trial_balance_holds(self) -> None:
        books_now = books.trial_balance(self.venue.pk)
        assert books_now.holds, books_now

    @invariant()
    def the_ledger_is_the_model(self) -> None:
        stored = dict(Account.objects.filter(venue=self.venue).values_list("pk", "balance"))
        assert {a: b for a, b in stored.items() if b} == {a: b for a, b in self.expected.items() if b}


@pytest.mark.django_db
def test_purchases_refusals_and_prizes_keep_the_books_balanced() -> None:
    run_state_machine_as_test(
        ElectronicLedger,
        settings=hypothesis_settings(
            max_examples=EXAMPLES, stateful_step_count=25, deadline=None, derandomize=True
        ),
    )
    print(sorted(SEEN.items()))  # shown with -s
    # The runs reached every operation and the main refusals (a property that never ran proves nothing).
    wanted = ["load: done", "purchase: done", "retry: replayed", "retry: refused key_reused", "game: played"]
    wanted += [f"purchase: refused {code}" for code in ("insufficient_balance", "card_blocked", "max_cards")]
    wanted += ["prize: line paid", "prize: bingo paid", "prize: figure paid"]
    assert not [w for w in wanted if not SEEN[w]], SEEN
