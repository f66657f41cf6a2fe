"""Amounts as a person types them on the pages, one set of rules on both sides: the pages' reader
(halls/static/halls/format.js: HallFormat.parseAmount / readAmount, run here under node) and the server's
(halls.money.parse_typed, for the forms posted to it: the setup page, the paper import). Spanish writes
"1.234,56"; "1234,56", "1234.56" and "12,5" are read too; what is malformed or ambiguous is refused, saying
so, and what reaches the API is a decimal string."""

from __future__ import annotations

import json
import shutil
import subprocess
from decimal import Decimal
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from bingo.traditional.models import CardSeries
from halls.models import Venue
from halls.money import parse_typed

FORMAT_JS = Path(__file__).resolve().parents[2] / "halls" / "static" / "halls" / "format.js"

# typed -> (Spanish page, English page); None: refused.
CASES: dict[str, tuple[str | None, str | None]] = {
    "1.234,56": ("1234.56", "1234.56"),
    "1234,56": ("1234.56", "1234.56"),
    "1234.56": ("1234.56", "1234.56"),
    "12,5": ("12.50", "12.50"),
    "12": ("12.00", "12.00"),
    "0,05": ("0.05", "0.05"),
    " 1.234,56 € ": ("1234.56", "1234.56"),
    "1.234.567,8": ("1234567.80", "1234567.80"),
    "1,234.56": ("1234.56", "1234.56"),
    "1.234": ("1234.00", None),  # Spanish thousands; in English a decimal with three places
    "12,345": (None, "12345.00"),  # in Spanish cents past the second: ambiguous
    "1.234.56": (None, None),
    "1,234,5": (None, None),
    "1.23,45": (None, None),
    "12,": (None, None),
    ",5": (None, None),
    "0,001": (None, None),
    "-5": (None, None),
    "1e3": (None, None),
    "doce": (None, None),
    "": (None, None),
}


@pytest.mark.parametrize("typed", list(CASES))
def test_the_server_reads_typed_amounts(typed: str) -> None:
    spanish, english = CASES[typed]
    for mark, expected in ((",", spanish), (".", english)):
        got = parse_typed(typed, decimal_mark=mark)
        assert got == (None if expected is None else Decimal(expected)), (typed, mark, got)
        if got is not None:
            assert str(got) == expected  # exact cents, never through a float


NODE_RUNNER = """
const fs = require("fs");
const [file, lang, cases] = [process.argv[1], process.argv[2], JSON.parse(process.argv[3])];
const window = {
  document: {documentElement: {lang: lang}},
  django: {get_format: () => lang},
  gettext: (s) => s,
  interpolate: (f, v) => f.replace(/%\\((\\w+)\\)s/g, (all, k) => v[k]),
};
new Function("window", fs.readFileSync(file, "utf8"))(window);
const fmt = window.HallFormat;
const out = {};
for (const typed of cases) {
  out[typed] = {parsed: fmt.parseAmount(typed), read: fmt.readAmount(typed, true)};
}
console.log(JSON.stringify({mark: fmt.decimalMark, out: out}));
"""


def _in_node(language: str) -> dict[str, object]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the pages' reader is covered by the browser tests")
    run = subprocess.run(
        [node, "-e", NODE_RUNNER, str(FORMAT_JS), language, json.dumps(list(CASES))],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    answer: dict[str, object] = json.loads(run.stdout)
    return answer


@pytest.mark.parametrize(("language", "column", "mark"), [("es", 0, ","), ("en", 1, ".")])
def test_the_pages_read_typed_amounts_as_the_server_does(language: str, column: int, mark: str) -> None:
    answer = _in_node(language)
    assert answer["mark"] == mark
    out = answer["out"]
    assert isinstance(out, dict)
    for typed, expected in CASES.items():
        got = out[typed]
        assert got["parsed"] == expected[column], (language, typed, got)
        assert got["read"]["amount"] == (
            expected[column] if expected[column] is not None else (None if typed else "")
        ), (
            language,
            typed,
            got,
        )
        # The same rules on the server.
        server = parse_typed(typed, decimal_mark=mark)
        assert (None if server is None else str(server)) == expected[column], (language, typed)
    # Refused, the reader says why: ambiguous, or not an amount, with an example the page's way.
    assert out["12,345" if language == "es" else "1.234"]["read"]["problem"].count("ambiguous") == 1
    example = "1.234,50" if language == "es" else "1,234.50"
    assert (
        out["1.234.56"]["read"]["problem"]
        == f"“1.234.56” is not an amount: type euros and cents, like {example}."
    )
    assert out[""]["read"]["problem"] == f"Type an amount, like {example}."


@pytest.mark.django_db
def test_the_setup_page_reads_a_spanish_amount(venue: Venue, operator: User, settings: object) -> None:
    client = Client()
    client.force_login(operator)
    client.cookies["django_language"] = "es"
    form = {"action": "series_create", "section": "series", "venue": venue.pk, "code": "S1", "strips": "6"}
    refused = client.post("/setup/", {**form, "face_value": "1,234"})
    assert "es ambiguo" not in refused.content.decode()  # "1,234": cents past the second, not an amount
    assert "no es un importe" in refused.content.decode()
    assert not CardSeries.objects.exists()
    assert client.post("/setup/", {**form, "face_value": "1.234,56"}).status_code == 302
    assert CardSeries.objects.get(code="S1").face_value == Decimal("1234.56")


@pytest.mark.django_db
@pytest.mark.parametrize(("language", "one", "ten"), [("es", "1,00", "10,00"), ("en", "1.00", "10.00")])
def test_the_setup_page_fills_its_amounts_in_its_language(
    venue: Venue, operator: User, language: str, one: str, ten: str
) -> None:
    """The boxes the setup page pre-fills show the page's decimal mark, and the form reads them back."""
    client = Client()
    client.force_login(operator)
    client.cookies["django_language"] = language
    page = client.get("/setup/").content.decode()
    assert f'name="face_value" value="{one}"' in page
    assert f'name="table_minimum" value="{ten}"' in page
    form = {"action": "series_create", "section": "series", "venue": venue.pk, "code": "S1", "strips": "1"}
    assert client.post("/setup/", {**form, "face_value": one}).status_code == 302
    assert CardSeries.objects.get(code="S1").face_value == Decimal("1.00")


@pytest.mark.django_db
@pytest.mark.parametrize("typed", ["5.000,00", "5000,00", "5000.00", "5000"])
def test_the_setup_page_reads_a_thousands_amount_typed_in_spanish(
    venue: Venue, operator: User, typed: str
) -> None:
    client = Client()
    client.force_login(operator)
    client.cookies["django_language"] = "es"
    form = {"action": "series_create", "section": "series", "venue": venue.pk, "code": "S1", "strips": "1"}
    assert client.post("/setup/", {**form, "face_value": typed}).status_code == 302
    assert CardSeries.objects.get(code="S1").face_value == Decimal("5000.00")
