"""Card series at a real hall's size, on PostgreSQL: 100,002 cards made at once, a 6,000-card sale."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest
from django.conf import settings
from django.db import connection
from django.db.models import Count, F

from bingo import cardgen
from bingo import cards as v1
from bingo.cards import CardGrid, pack_numbers, security_code
from bingo.traditional.models import Card, CardSeries, SaleOperation, SoldCard
from bingo.traditional.services import games, readmodels, sales
from bingo.traditional.services import series as series_services
from halls.errors import Conflict, InvalidInput
from halls.models import AuditEntry


def assert_card_is_its_master(series: CardSeries, card: Card) -> None:
    grid = CardGrid.from_json(card.grid)
    assert grid == series_services.master_card(series, card.serial)
    assert bytes(card.numbers) == pack_numbers(grid)
    assert card.key == grid.key()
    assert card.security_code == security_code(
        settings.HALL_CARD_SECRET.encode(), series.code, card.serial, grid
    )


def test_a_series_of_100_000_cards(venue, operator):
    series = series_services.create_series(
        venue=venue, code="BIG", face_value=Decimal("1.00"), strips=16_667, actor=operator, seed="big"
    )
    series.refresh_from_db()
    assert (series.generator, series.rederived_strips, series.card_count) == ("v2", [], 100_002)
    cards = Card.objects.filter(series=series)
    assert cards.count() == 100_002
    assert set(cards.values_list("serial", flat=True)) == set(range(1, 100_003))
    # No two cards of the series hold the same numbers.
    assert not cards.values("key").annotate(n=Count("pk")).filter(n__gt=1).exists()
    serials = [1, 6, 7, 50_000, 100_002, *random.sample(range(1, 100_003), 30)]
    for card in cards.filter(serial__in=serials):
        assert_card_is_its_master(series, card)
    entry = AuditEntry.objects.get(action="series.created", object_id=str(series.pk))
    assert entry.data["generator"] == "v2"
    assert entry.data["strips"] == 16_667


def test_a_series_stores_the_strips_it_derived_again(venue, operator, monkeypatch):
    """A forced repeat (strip 4 first comes out as strip 2) is stored, and its cards recompute from it."""
    real = cardgen._stream

    def repeating(key: bytes, index: int, attempt: int, words: int) -> bytes:
        return real(key, 2, 0, words) if (index, attempt) == (4, 0) else real(key, index, attempt, words)

    monkeypatch.setattr(cardgen, "_stream", repeating)
    series = series_services.create_series(
        venue=venue, code="DUP", face_value=Decimal("1.00"), strips=6, actor=operator, seed="dup"
    )
    monkeypatch.setattr(cardgen, "_stream", real)
    series.refresh_from_db()
    assert series.rederived_strips == [[4, 1]]
    for card in Card.objects.filter(series=series):
        assert_card_is_its_master(series, card)
    assert Card.objects.filter(series=series).values("key").distinct().count() == 36


def test_a_series_made_by_v1_still_recomputes_with_v1(venue, operator):
    """Series made before v2 keep their label and their cards: the master card comes from v1."""
    series = series_services.create_series(
        venue=venue, code="OLD", face_value=Decimal("1.00"), strips=3, actor=operator, seed="old"
    )
    # What migration 0004 leaves for a series made before it: v1's cards under the "v1" label.
    old = v1.generate_series(b"old", 3)
    CardSeries.objects.filter(pk=series.pk).update(generator="v1")
    for card in Card.objects.filter(series=series):
        grid = old[card.serial - 1]
        Card.objects.filter(pk=card.pk).update(
            grid=grid.to_json(), key=grid.key(), numbers=pack_numbers(grid)
        )
    series.refresh_from_db()
    for serial in (1, 10, 18):
        assert series_services.master_card(series, serial) == old[serial - 1]
        assert series_services.master_card(series, serial) != cardgen.card_from_seed(b"old", serial)
    with pytest.raises(InvalidInput, match="serials 1–18"):
        series_services.master_card(series, 19)


def test_series_size_limits(venue, operator):
    for strips in (0, series_services.MAX_STRIPS + 1):
        with pytest.raises(InvalidInput) as refused:
            series_services.create_series(
                venue=venue, code="X", face_value=Decimal("1.00"), strips=strips, actor=operator
            )
        assert refused.value.code == "bad_strips"
    assert not CardSeries.objects.filter(code="X").exists()


@pytest.fixture
def big_series(venue, operator):
    return series_services.create_series(
        venue=venue, code="S", face_value=Decimal("0.50"), strips=2_000, actor=operator, seed="sale"
    )


def test_a_6000_card_sale_and_its_return(manual_game, big_series, caller, cashier):
    game = games.open_sales(game=manual_game, actor=caller)
    sale = sales.sell_range(game=game, series=big_series, first=1, last=6000, actor=cashier)
    assert (sale.cards, sale.amount) == (6000, Decimal("3000.00"))
    sold = SoldCard.objects.filter(game=game)
    assert sold.count() == 6000
    assert set(sold.values_list("card__serial", flat=True)) == set(range(1, 6001))
    # Each row carries its own card's key and the operation that sold it.
    assert not sold.exclude(card_key=F("card__key")).exists()
    assert set(sold.values_list("sale_id", flat=True)) == {sale.pk}
    assert readmodels.sales_totals(game) == {"cards_sold": 6000, "sales_total": Decimal("3000.00")}

    # Overlapping the sold range: refused, naming the cards, nothing written.
    with pytest.raises(Conflict) as refused:
        sales.sell_range(game=game, series=big_series, first=5990, last=6010, actor=cashier)
    assert refused.value.code == "already_sold"
    assert refused.value.details["serials"] == list(range(5990, 6001))
    assert SaleOperation.objects.filter(game=game).count() == 1
    assert sold.count() == 6000

    sales.sell_range(game=game, series=big_series, first=6001, last=12000, actor=cashier)
    sales.return_range(game=game, series=big_series, first=1, last=3000, actor=cashier)
    assert readmodels.sales_totals(game) == {"cards_sold": 9000, "sales_total": Decimal("4500.00")}
    assert sold.count() == 9000
    audit = AuditEntry.objects.filter(action__startswith="sales.").order_by("pk")
    assert [e.data["cards_sold"] for e in audit] == [6000, 12000, 9000]


def test_two_cards_with_the_same_numbers_are_refused_in_one_sale(
    manual_game, venue, operator, caller, cashier
):
    """Series of the same seed hold the same cards: selling both in one game is refused, nothing written."""
    twin_a = series_services.create_series(
        venue=venue, code="TA", face_value=Decimal("1.00"), strips=1000, actor=operator, seed="twin"
    )
    twin_b = series_services.create_series(
        venue=venue, code="TB", face_value=Decimal("1.00"), strips=1000, actor=operator, seed="twin"
    )
    game = games.open_sales(game=manual_game, actor=caller)
    sales.sell_range(game=game, series=twin_a, first=1, last=6000, actor=cashier)
    with pytest.raises(Conflict) as refused:
        sales.sell_range(game=game, series=twin_b, first=5001, last=6000, actor=cashier)
    assert refused.value.code == "duplicate_numbers"
    assert SoldCard.objects.filter(game=game).count() == 6000
    assert SaleOperation.objects.filter(game=game).count() == 1


def test_the_orm_path_of_the_embedded_hall_writes_the_same_cards(venue, operator, monkeypatch):
    """SQLite has no COPY: its batched ORM insert (forced here on PostgreSQL) writes the same cards."""
    copied = series_services.create_series(
        venue=venue, code="C", face_value=Decimal("1.00"), strips=400, actor=operator, seed="same"
    )
    monkeypatch.setattr(connection, "vendor", "sqlite")
    inserted = series_services.create_series(
        venue=venue, code="O", face_value=Decimal("1.00"), strips=400, actor=operator, seed="same"
    )
    monkeypatch.undo()
    fields = ("serial", "grid", "key", "numbers")
    by_copy = [(*row[:3], bytes(row[3])) for row in Card.objects.filter(series=copied).values_list(*fields)]
    by_orm = [(*row[:3], bytes(row[3])) for row in Card.objects.filter(series=inserted).values_list(*fields)]
    assert len(by_orm) == 2400
    assert by_orm == by_copy
    for card in Card.objects.filter(series=inserted, serial__in=[1, 1200, 2400]):
        assert_card_is_its_master(inserted, card)
