"""Gaming-tax returns (issue 29) from the records of a month of play, checked by hand to the cent; filed
frozen (append-only, the CSV's SHA-256), recomputed to the same figures; refused with a clear message and
nothing written for a period not closed, a period with no rate table, a game type without a rate, a period
filed already; the rate tables as data (checked, never overlapping, frozen once used); the feed message."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.db import DatabaseError, transaction
from django.utils import translation

from halls.errors import Conflict, InvalidInput, PermissionDenied
from halls.feed import schema
from halls.feed.kinds import FeedKind
from halls.link.models import Destination, OutboxMessage
from halls.models import AuditEntry, Jurisdiction
from halls.services import venueclock
from halls.tax import compute
from halls.tax.models import RateTable, TaxReturn
from halls.tax.services import periods, rates, returns
from jackpots.rulepacks import PACKS
from jackpots.tables.models import TableDrop
from jackpots.tables.services import drops, tables
from tests.tax.tax_support import LINES, Month, past, play_a_month, rate_table, reading, superuser

D = Decimal


@pytest.fixture
def month(venue, session, room, card_series, caller, cashier, ball_set) -> Month:
    return play_a_month(
        venue=venue, session=session, room=room, series=card_series, caller=caller, cashier=cashier
    )


def lines_of(draft_or_return: Any) -> dict[str, dict[str, str]]:
    rows = (
        draft_or_return.lines
        if isinstance(draft_or_return, TaxReturn)
        else [compute.line_row(line) for line in draft_or_return.computed.lines]
    )
    return {row[0]: dict(zip(compute.COLUMNS, row, strict=True)) for row in rows}


def written() -> tuple[int, int]:
    return TaxReturn.objects.count(), AuditEntry.objects.count()


def test_a_month_of_play_checked_by_hand_to_the_cent(month, venue, operator) -> None:
    rate_table()
    past(venue, month.period)
    draft = returns.compute_return(venue=venue, period=month.period.label)
    lines = lines_of(draft)
    # Traditional bingo: 30 cards of 2.00 at face value = 60.00 (the void game sold nothing that counts);
    # 20 % of 60.00 = 12.00.
    assert (lines["traditional"]["played"], lines["traditional"]["prizes"]) == ("60.00", "36.00")
    assert (lines["traditional"]["base"], lines["traditional"]["due"]) == ("60.00", "12.00")
    # Type B: a fixed fee of 45.00 per machine, one machine in the month = 45.00.
    assert (lines["machine_b"]["machines"], lines["machine_b"]["base"], lines["machine_b"]["due"]) == (
        "1",
        "0.00",
        "45.00",
    )
    # Type C: the meters from before the month (1,000.00 in; 800.00 + 50.00 out) to its end (1,333.33 in;
    # 1,100.00 + 60.00 out): 333.33 bet, 310.00 paid, a base of 23.33; 12.5 % = 2.91625, 2.92 half up,
    # -0.00375 left by the rounding. The reading after the month does not count.
    assert (lines["machine_c"]["played"], lines["machine_c"]["prizes"]) == ("333.33", "310.00")
    assert (lines["machine_c"]["base"], lines["machine_c"]["exact"], lines["machine_c"]["due"]) == (
        "23.33",
        "2.91625",
        "2.92",
    )
    assert lines["machine_c"]["remainder"] == "-0.00375"
    assert draft.computed.total == D("59.92")  # 12.00 + 45.00 + 2.92

    filed = returns.file_return(venue=venue, period=month.period.label, actor=operator)
    assert (filed.total_due, filed.period, filed.rounding) == (D("59.92"), month.period.label, "half_up")
    assert filed.digest == compute.digest(filed.csv) == draft.digest
    assert filed.lines == [compute.line_row(line) for line in draft.computed.lines]
    entry = AuditEntry.objects.filter(venue=venue, action="tax.return_filed").get()
    assert entry.data == {
        "period": month.period.label,
        "rate_table": filed.rate_table_id,
        "total_due": "59.92",
        "digest": filed.digest,
    }


def test_recomputing_a_closed_period_gives_the_same_figures_to_the_cent(month, venue, operator) -> None:
    rate_table()
    past(venue, month.period)
    first = returns.compute_return(venue=venue, period=month.period.label)
    filed = returns.file_return(venue=venue, period=month.period.label, actor=operator)
    # Play goes on after the period: a reading of the next month moves nothing of this one.
    reading(month.type_b, 2, periods.bounds(venue, month.period)[1].replace(day=3), "500.00", "400.00", "0")
    again = returns.recompute(filed)
    assert again.csv == filed.csv == first.csv
    assert again.computed.total == filed.total_due == first.computed.total
    with pytest.raises(Conflict) as refused:
        returns.file_return(venue=venue, period=month.period.label, actor=operator)
    assert refused.value.code == "return_filed"


def test_a_period_not_closed_yet_is_refused_and_nothing_is_written(month, venue, operator) -> None:
    rate_table()
    before = written()
    for call in (
        lambda: returns.compute_return(venue=venue, period=month.period.label),
        lambda: returns.file_return(venue=venue, period=month.period.label, actor=operator),
    ):
        with pytest.raises(Conflict) as refused:
            call()
        assert refused.value.code == "period_not_closed"
        assert month.period.label in refused.value.message
    assert written() == before


def test_a_period_with_no_rate_table_is_blocked_in_spanish_naming_jurisdiction_period_and_game_type(
    month, venue, operator
) -> None:
    past(venue, month.period)
    before = written()
    with translation.override("es"), pytest.raises(Conflict) as refused:
        returns.file_return(venue=venue, period=month.period.label, actor=operator)
    assert refused.value.code == "no_rate_table"
    message = refused.value.message
    assert "Ninguna tabla de tipos" in message
    assert "Melilla 2014" in message and month.period.label in message and "Bingo tradicional" in message
    assert refused.value.details["game_types"] == ["machine_b", "machine_c", "traditional"]
    assert written() == before


def test_a_game_type_with_figures_and_no_rate_blocks_the_return(month, venue, operator) -> None:
    rate_table(lines=[line for line in LINES if line["game_type"] != "machine_c"])
    past(venue, month.period)
    before = written()
    with pytest.raises(Conflict) as refused:
        returns.file_return(venue=venue, period=month.period.label, actor=operator)
    assert refused.value.details["game_types"] == ["machine_c"]
    assert "Type C machines" in refused.value.message
    assert written() == before


def test_a_rate_table_that_ends_inside_the_period_does_not_cover_it(month, venue, operator) -> None:
    table = rate_table()
    rates.change_rate_table(
        table=table,
        reference=table.reference,
        valid_from=table.valid_from,
        valid_until=month.period.last.replace(day=15),
        rounding="half_up",
        lines=LINES,
        actor=superuser(),
    )
    past(venue, month.period)
    with pytest.raises(Conflict) as refused:
        returns.compute_return(venue=venue, period=month.period.label)
    assert refused.value.code == "no_rate_table"


def test_a_period_of_the_wrong_shape_for_the_jurisdiction_is_refused(venue, settings) -> None:
    with pytest.raises(InvalidInput) as refused:
        returns.compute_return(venue=venue, period="2026-Q1")
    assert (refused.value.code, refused.value.details) == ("bad_period", {"field": "period"})
    settings.HALL_TAX_BY_JURISDICTION = {Jurisdiction.ML: {"period": "quarter"}}
    assert periods.period_kind(Jurisdiction.ML) == "quarter"
    with pytest.raises(InvalidInput):
        returns.compute_return(venue=venue, period="2026-01")


def test_a_quarter_by_setting_adds_up_its_three_months(month, venue, operator, settings) -> None:
    settings.HALL_TAX_BY_JURISDICTION = {"ML": {"period": "quarter"}}
    rate_table()
    quarter = compute.period_of("quarter", month.period.first)
    past(venue, quarter)
    draft = returns.compute_return(venue=venue, period=quarter.label)
    lines = lines_of(draft)
    assert (draft.period.first, draft.period.last) == (quarter.first, quarter.last)
    # The quarter starts on or before the month: the type C base counts from the reading before the quarter
    # (if any: the first reading is three days before the month) to the last reading inside it.
    assert lines["traditional"]["due"] == "12.00"
    assert lines["machine_b"]["due"] == "45.00"  # one machine, one fee per period
    filed = returns.file_return(venue=venue, period=quarter.label, actor=operator)
    assert filed.period_kind == "quarter" and filed.period == quarter.label


def test_a_filed_return_is_never_edited_nor_deleted(month, venue, operator) -> None:
    rate_table()
    past(venue, month.period)
    filed = returns.file_return(venue=venue, period=month.period.label, actor=operator)
    filed.total_due = D("0.01")
    with pytest.raises(DatabaseError), transaction.atomic():
        filed.save()
    with pytest.raises(DatabaseError), transaction.atomic():
        TaxReturn.objects.filter(pk=filed.pk).delete()
    assert TaxReturn.objects.get(pk=filed.pk).total_due == D("59.92")


# --- the rate tables ------------------------------------------------------------------------------------


def test_rate_tables_are_checked_data(venue) -> None:
    bad: list[tuple[list[dict[str, Any]], str]] = [
        ([], "lines"),
        ([{"game_type": "roulette", "basis": "sales", "rate_percent": "20"}], "lines[0].game_type"),
        ([{"game_type": "traditional", "basis": "profit", "rate_percent": "20"}], "lines[0].basis"),
        ([{"game_type": "traditional", "basis": "sales", "rate_percent": "101"}], "lines[0].rate_percent"),
        (
            [{"game_type": "traditional", "basis": "sales", "rate_percent": "1.23456"}],
            "lines[0].rate_percent",
        ),
        ([{"game_type": "machine_b", "basis": "machines", "rate_percent": "5"}], "lines[0].fee_per_machine"),
        (
            [{"game_type": "machine_b", "basis": "machines", "fee_per_machine": "1.234"}],
            "lines[0].fee_per_machine",
        ),
        ([{"game_type": "traditional", "basis": "sales"}], "lines[0].rate_percent"),
        ([LINES[0], LINES[0]], "lines[1].game_type"),
        ([{**LINES[0], "extra": 1}], "lines[0]"),
    ]
    for lines, field in bad:
        with pytest.raises(InvalidInput) as refused:
            rate_table(lines=lines)
        assert (refused.value.code, refused.value.details["field"]) == ("bad_rate_table", field), lines
    assert RateTable.objects.count() == 0
    table = rate_table()
    assert table.lines == sorted(LINES, key=lambda line: str(line["game_type"]))
    entry = AuditEntry.objects.get(venue=venue, action="tax.rate_table_recorded")
    assert entry.data["reference"] == table.reference


def test_rate_tables_of_a_jurisdiction_never_overlap(venue) -> None:
    first = rate_table(valid_from="2026-01-01")
    with pytest.raises(Conflict) as refused:
        rate_table(valid_from="2026-06-01")
    assert refused.value.code == "rate_tables_overlap"
    rates.change_rate_table(
        table=first,
        reference=first.reference,
        valid_from=first.valid_from,
        valid_until=date(2026, 5, 31),
        rounding="down",
        lines=LINES,
        actor=superuser(),
    )
    second = rate_table(valid_from="2026-06-01")
    assert rates.table_for("ML", compute.period_of("month", date(2026, 5, 10))) == first
    assert rates.table_for("ML", compute.period_of("month", date(2026, 6, 10))) == second
    assert rates.table_for("ML", compute.period_of("quarter", date(2026, 5, 10))) is None  # Q2 spans both
    assert rate_table(jurisdiction="CT", valid_from="2026-01-01").jurisdiction == "CT"


def test_a_rate_table_a_return_was_filed_with_stays_as_filed(month, venue, operator) -> None:
    table = rate_table()
    past(venue, month.period)
    returns.file_return(venue=venue, period=month.period.label, actor=operator)
    with pytest.raises(Conflict) as refused:
        rates.change_rate_table(
            table=table,
            reference=table.reference,
            valid_from=table.valid_from,
            valid_until=None,
            rounding="down",
            lines=LINES,
            actor=superuser(),
        )
    assert refused.value.code == "rate_table_used"
    assert RateTable.objects.get(pk=table.pk).rounding == "half_up"


def test_only_the_installations_operator_records_rate_tables(venue, other_venue, operator) -> None:
    with pytest.raises(PermissionDenied):
        rates.record_rate_table(
            jurisdiction="ML",
            reference="Orden",
            valid_from=date(2026, 1, 1),
            lines=LINES,
            actor=operator,  # the operator of one venue of two
        )
    assert RateTable.objects.count() == 0


# --- the feed ---------------------------------------------------------------------------------------------


def test_the_filed_return_goes_on_the_feed_in_its_transaction(month, venue, operator, settings) -> None:
    settings.HALL_FEED_ENABLED = True
    rate_table()
    past(venue, month.period)
    filed = returns.file_return(venue=venue, period=month.period.label, actor=operator)
    # emit refuses outside the fact's transaction: the message is in the outbox, written with the return.
    [sent] = OutboxMessage.objects.filter(destination=Destination.REGULATOR, kind=FeedKind.TAX_RETURN)
    kind, payload, venue_id = sent.kind, sent.payload["payload"], sent.venue_id
    assert (kind, venue_id) == (FeedKind.TAX_RETURN, venue.pk)
    assert payload["venue"] == venue.licence_number and payload["period"] == month.period.label
    assert (payload["due"], payload["digest"], payload["jurisdiction"]) == ("59.92", filed.digest, "ML")
    assert {b["game_type"]: b["base"] for b in payload["bases"]} == {
        "machine_b": "0.00",
        "machine_c": "23.33",
        "traditional": "60.00",
    }
    assert payload["rate_table"] == filed.rate_reference


def test_the_returns_payload_is_checked_against_its_schema(month, venue, operator) -> None:
    rate_table()
    past(venue, month.period)
    filed = returns.file_return(venue=venue, period=month.period.label, actor=operator)
    payload = returns.feed_payload(filed)
    schema.validate_payload("tax.return", payload)
    with pytest.raises(schema.SchemaError):
        schema.validate_payload("tax.return", {**payload, "player": "someone"})
    with pytest.raises(schema.SchemaError):
        schema.validate_payload("tax.return", {**payload, "due": "59.9"})


def test_a_return_is_per_venue(month, venue, other_venue, operator) -> None:
    rate_table()
    rate_table(jurisdiction="AN10")
    past(venue, month.period)
    past(other_venue, month.period)
    other = returns.compute_return(venue=other_venue, period=month.period.label)
    assert other.computed.total == D("0.00")  # nothing played there
    assert {line.game_type: line.played for line in other.computed.lines} == {
        "machine_b": D("0"),
        "machine_c": D("0"),
        "traditional": D("0"),
    }


# --- the table drop -------------------------------------------------------------------------------------


def test_the_table_drop_counted_per_day_is_the_tables_base(venue, operator) -> None:
    table = tables.create_table(
        venue=venue,
        number=7,
        name="Mesa 7",
        game=PACKS["ML_PSD_CARRUSEL"].game,
        table_minimum=D("10.00"),
        rule_pack="ML_PSD_CARRUSEL",
        actor=operator,
    )
    today = venueclock.today(venue)
    last_month = compute.period_of("month", today.replace(day=1) - timedelta(days=1))
    drops.record_drop(table=table, day=last_month.first, amount="1234.56", actor=operator)
    drops.record_drop(table=table, day=last_month.last, amount="765.44", actor=operator)
    drops.record_drop(table=table, day=last_month.first - timedelta(days=1), amount="999.99", actor=operator)
    # The same count again is the same row; another amount, a day not over, a fraction of a cent: refused.
    again = drops.record_drop(table=table, day=last_month.first, amount=D("1234.56"), actor=operator)
    assert TableDrop.objects.filter(table=table).count() == 3 and again.amount == D("1234.56")
    for day, amount, code in (
        (last_month.first, "1234.57", "drop_counted"),
        (today, "10.00", "day_not_over"),
        (last_month.first + timedelta(days=1), "10.001", "bad_amount"),
    ):
        with pytest.raises((Conflict, InvalidInput)) as refused:
            drops.record_drop(table=table, day=day, amount=amount, actor=operator)
        assert refused.value.code == code
    assert TableDrop.objects.filter(table=table).count() == 3
    rate_table(lines=[{"game_type": "tables", "basis": "drop", "rate_percent": "12"}])
    draft = returns.compute_return(venue=venue, period=last_month.label)
    [line] = draft.computed.lines
    # 1,234.56 + 765.44 = 2,000.00 of drop in the month (the day before it does not count); 12 % = 240.00.
    assert (line.game_type, line.drop, line.base) == ("tables", D("2000.00"), D("2000.00"))
    assert line.due == D("240.00")
    assert AuditEntry.objects.filter(venue=venue, action="table.drop_counted").count() == 3
