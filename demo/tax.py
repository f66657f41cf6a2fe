"""The demo's gaming-tax rates (issue 29): one rate table for the demo hall's jurisdiction, recorded once
through halls.tax.services.rates as an operator would, so the returns page (/tax/) computes the demo's play
once a month is over (the lab clock moves the venue past it). Made-up rates, said so in their reference:
never the law in force."""

from __future__ import annotations

from datetime import date

from demo.hall import DemoHall
from halls.tax.models import RateTable
from halls.tax.services import rates

REFERENCE = "Tarifa de demostración (inventada: no es la ley vigente)"
LINES = [
    {"game_type": "traditional", "basis": "sales", "rate_percent": "20", "fee_per_machine": None},
    {"game_type": "interconnected", "basis": "sales", "rate_percent": "20", "fee_per_machine": None},
    {"game_type": "simultaneous", "basis": "sales", "rate_percent": "20", "fee_per_machine": None},
    {"game_type": "electronic", "basis": "net", "rate_percent": "15", "fee_per_machine": None},
    {"game_type": "automatic", "basis": "net", "rate_percent": "15", "fee_per_machine": None},
    {"game_type": "machine_b", "basis": "machines", "rate_percent": None, "fee_per_machine": "45.00"},
    {"game_type": "machine_c", "basis": "net", "rate_percent": "12.5", "fee_per_machine": None},
    {"game_type": "tables", "basis": "drop", "rate_percent": "10", "fee_per_machine": None},
]


def seed_tax(hall: DemoHall) -> None:
    jurisdiction = hall.venue.jurisdiction
    if not RateTable.objects.filter(jurisdiction=jurisdiction).exists():
        rates.record_rate_table(
            jurisdiction=jurisdiction,
            reference=REFERENCE,
            valid_from=date(2026, 1, 1),
            lines=LINES,
            actor=hall.operator,
        )
    hall.notes.append(
        "Gaming tax: /tax/ (user operator): compute and file a closed month's return, then its PDF and CSV "
        "(made-up demo rates; the month the demo plays closes at its end)."
    )
