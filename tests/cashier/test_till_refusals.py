"""Every refusal the till can receive is a sentence a person reads, in the page's language (issue 26).

The till shows the API's error `message`, never its `code`, so every DomainError raised on the till's paths
(its API and services, card sales and returns, print at the table, the role checks) must carry a message
marked for translation, and an amount in it must be written for a person ("50,00 €"), not as the wire's
"50.00". Read from the source: a new refusal that forgets either fails here, naming its file and line.
Then a few refusals answered in Spanish end to end.
"""

from __future__ import annotations

import ast
from decimal import Decimal
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.utils import translation
from hypothesis import given
from hypothesis import strategies as st

from halls import money
from halls.cashier.ledger import Kind
from halls.cashier.models import Account
from halls.cashier.services import ledger
from halls.errors import Conflict
from halls.models import Venue
from tests.api_support import api_client

ROOT = Path(__file__).resolve().parents[2]
# What the till's pages call (halls/cashier/static/cashier/*.js, bingo/static/bingo/cashier.js).
TILL_MODULES = [
    *sorted((ROOT / "halls/cashier/api").glob("*.py")),
    *sorted((ROOT / "halls/cashier/services").glob("*.py")),
    ROOT / "bingo/traditional/services/sales.py",
    ROOT / "bingo/traditional/services/paper.py",
    ROOT / "bingo/traditional/services/stock.py",
    ROOT / "bingo/traditional/paper_api.py",
    ROOT / "halls/access.py",
]
REFUSALS = {"DomainError", "InvalidInput", "NotFound", "PermissionDenied", "Conflict", "Unavailable"}
TRANSLATORS = {"_", "gettext", "ngettext", "pgettext"}
# Wire formats: an amount put into a message through one of these reads "50.00" to a person.
RAW_AMOUNTS = {"text", "text_cents", "euros"}


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _translated(message: ast.expr, local: dict[str, list[ast.expr]]) -> bool:
    """`_("…")` or `_("…") % {…}`, directly or through a local name (every value it is given)."""
    if isinstance(message, ast.BinOp) and isinstance(message.op, ast.Mod):
        message = message.left
    if isinstance(message, ast.Name) and message.id in local:
        return all(_translated(value, {}) for value in local[message.id])
    return isinstance(message, ast.Call) and _name(message.func) in TRANSLATORS


def _raw_amounts(message: ast.expr) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(message)
        if isinstance(node, ast.Call)
        and _name(node.func) in RAW_AMOUNTS
        and isinstance(node.func, ast.Attribute)
        and _name(node.func.value) == "money"
    ]


Refusal = tuple[str, int, ast.expr, dict[str, list[ast.expr]]]


def _refusals() -> list[Refusal]:
    """(file, line, message expression, the function's local assignments) for every refusal built. A
    helper that refuses with a message it is given (`_required(field, message)`) is followed to its
    callers: what they pass is the message."""
    found: list[Refusal] = []
    helpers: dict[str, int] = {}  # a helper's name -> the position of its message parameter
    calls: list[tuple[str, ast.Call]] = []
    for path in TILL_MODULES:
        where = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text(), filename=str(path))
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            params = [a.arg for a in func.args.args]
            local: dict[str, list[ast.expr]] = {}
            for node in ast.walk(func):
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            local.setdefault(target.id, []).append(node.value)
            for node in ast.walk(func):
                if not isinstance(node, ast.Call):
                    continue
                calls.append((where, node))
                if _name(node.func) in REFUSALS and node.args:
                    message = node.args[0]
                    if isinstance(message, ast.Name) and message.id in params and message.id not in local:
                        helpers[func.name] = params.index(message.id)
                    else:
                        found.append((where, node.lineno, message, local))
    for where, call in calls:
        position = helpers.get(_name(call.func))
        if position is not None and len(call.args) > position:
            found.append((where, call.lineno, call.args[position], {}))
    return found


def test_the_till_paths_raise_refusals() -> None:
    """The scan reads the modules it names (a moved module would make the checks below vacuous)."""
    assert all(path.exists() for path in TILL_MODULES), [str(p) for p in TILL_MODULES if not p.exists()]
    assert len(_refusals()) > 60


def test_every_refusal_the_till_can_receive_is_translated() -> None:
    untranslated = []
    for where, line, message, local in _refusals():
        if not _translated(message, local):
            untranslated.append(f"{where}:{line}: {ast.unparse(message)[:80]}")
    assert untranslated == []


def test_no_refusal_writes_an_amount_the_wire_way() -> None:
    raw = []
    for where, _line, message, local in _refusals():
        expressions = [message]
        if isinstance(message, ast.BinOp) and isinstance(message.right, ast.Name):
            expressions += local.get(message.right.id, [])
        raw += [f"{where}:{at}" for expr in expressions for at in _raw_amounts(expr)]
    assert raw == [], "use halls.i18n.amount(amount) in a refusal's message"


def test_a_short_card_is_refused_in_spanish_with_its_amounts() -> None:
    """The ledger's refusal, whatever service asked: the message for a person, the details for the wire."""
    account = Account(code="card:1", kind=Kind.PLAYER_CARD)
    with translation.override("es"):
        refusal = ledger._short(account, Decimal("50"), Decimal("60.5"))
    assert isinstance(refusal, Conflict) and refusal.code == "insufficient_balance"
    assert refusal.message == "El saldo de la tarjeta es 50,00 €: 60,50 € supera lo que tiene."
    assert refusal.details["balance"] == "50" and refusal.details["needed"] == "60.5"  # the wire's, unchanged


@pytest.mark.django_db
def test_the_api_refuses_a_card_cash_out_in_spanish(cashier: User, venue: Venue) -> None:
    client = api_client(cashier)
    number = client.post(f"/api/cashier/venues/{venue.pk}/cards/", {}, format="json").json()["number"]
    answer = client.post(
        f"/api/cashier/venues/{venue.pk}/cards/{number}/cash-out/",
        {"amount": "50.00"},
        format="json",
        HTTP_ACCEPT_LANGUAGE="es",
    )
    assert answer.status_code == 409
    error = answer.json()["error"]
    assert error["code"] == "insufficient_balance"
    assert error["message"] == "El saldo de la tarjeta es 0,00 €: 50,00 € supera lo que tiene."


AMOUNTS = st.decimals(min_value=0, max_value=Decimal("999999999999.99"), places=2)


@given(AMOUNTS, st.sampled_from(["es", "en"]))
def test_an_amount_shown_reads_back_as_itself(amount: Decimal, language: str) -> None:
    """What a person reads is what the till takes back when it is typed: the same cents, in either language,
    with its currency once."""
    text = money.for_person(amount, language)
    assert text.count("€") == 1
    mark = "," if language == "es" else "."
    assert money.parse_typed(text, decimal_mark=mark) == amount
