"""The lock ranks are one table (halls.locks.Rank with TAKEN_BY): the code takes each rank only in the lock
modules the table names for it, every lock module is in the table, and the regions' and operators' rows
are locked through their ranks like every other row."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest
from django.conf import settings
from django.db import transaction

from halls.locks import TAKEN_BY, LockOrderError, Rank, take
from halls.services import regions
from tests.halls.region_support import operator, region

ROOT = Path(settings.BASE_DIR)
PRODUCT = ("halls", "bingo", "jackpots", "machines", "demo", "config")
TAKERS = ("take", "take_many")


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _ranks_taken() -> dict[str, set[Rank]]:
    """Per product module, the ranks it passes to `take` / `take_many` (as ``Rank.X`` or ``locks.Rank.X``)."""
    found: dict[str, set[Rank]] = defaultdict(set)
    for package in PRODUCT:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.Call) or not node.args:
                    continue
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                first = node.args[0]
                if (
                    called in TAKERS
                    and isinstance(first, ast.Attribute)
                    and ast.unparse(first.value).split(".")[-1] == "Rank"
                ):
                    found[_module(path)].add(Rank[first.attr])
    return found


def _lock_modules() -> set[str]:
    """Every lock module of the product: a ``locks.py`` of a package (halls.locks itself is the table)."""
    found = {_module(path) for package in PRODUCT for path in (ROOT / package).rglob("locks.py")}
    return found - {"halls.locks"}


def test_every_rank_is_taken_only_by_the_modules_the_table_names() -> None:
    assert set(TAKEN_BY) == set(Rank), f"ranks without a lock module: {sorted(set(Rank) - set(TAKEN_BY))}"
    wanted: dict[str, set[Rank]] = defaultdict(set)
    for rank, modules in TAKEN_BY.items():
        for module in modules:
            wanted[module].add(rank)
    taken = _ranks_taken()
    assert "halls.locks" not in wanted
    for module in sorted(set(wanted) | set(taken) - {"halls.locks"}):
        takes, given = taken.get(module, set()), wanted.get(module, set())
        assert takes == given, (
            f"{module} takes {sorted(r.name for r in takes)}; halls.locks.TAKEN_BY gives it "
            f"{sorted(r.name for r in given)}"
        )


def test_every_lock_module_is_in_the_table() -> None:
    named = {module for modules in TAKEN_BY.values() for module in modules}
    missing = _lock_modules() - named
    assert not missing, f"lock modules missing from halls.locks.TAKEN_BY: {sorted(missing)}"


@pytest.mark.django_db
def test_a_region_is_locked_through_its_rank() -> None:
    ml = region("ML")
    with transaction.atomic():
        take(Rank.ROOM, 1)  # a lock ranked after the region's: the region's lock is out of order
        with pytest.raises(LockOrderError, match="region"):
            regions.update_region(region=ml, name="Melilla", actor="t")
    ml.refresh_from_db()
    assert ml.name != "Melilla"
    assert regions.update_region(region=ml, name="Melilla", actor="t").name == "Melilla"


@pytest.mark.django_db
def test_an_operator_is_locked_through_its_rank() -> None:
    company = operator("B12345678")
    with transaction.atomic():
        take(Rank.ROOM, 1)
        with pytest.raises(LockOrderError, match="operator"):
            regions.update_operator(operator=company, name="Salones del Sur", actor="t")
    company.refresh_from_db()
    assert company.name != "Salones del Sur"
    renamed = regions.update_operator(operator=company, name="Salones del Sur", actor="t")
    assert renamed.name == "Salones del Sur"


# The cashier's money rows: locked only by the lock modules their ranks name, never FOR UPDATE there.
CASHIER_LOCKED = {
    "Shift": Rank.SHIFT,
    "Payable": Rank.PAYABLE,
    "Ticket": Rank.TICKET,
    "PlayerCard": Rank.PLAYER_CARD,
    "PlayerLimit": Rank.PLAYER_LIMIT,
    "Account": Rank.ACCOUNT,
}


def _row_locks() -> list[tuple[str, ast.Call, str]]:
    """Every `<Model>.objects...select_for_update(...)` of the product: (module, call, model named)."""
    found = []
    for package in PRODUCT:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "select_for_update"
                ):
                    found.append((_module(path), node, ast.unparse(node.func.value).split(".")[0]))
    return found


def test_accounts_tickets_and_payables_are_locked_only_through_their_ranks() -> None:
    """Shifts, payables, tickets, player cards and limits, accounts: every row lock of them is in a lock
    module halls.locks.TAKEN_BY names for the model's rank (which takes the rank, so the checker sees it)."""
    locks = [(module, call, model) for module, call, model in _row_locks() if model in CASHIER_LOCKED]
    outside = [
        f"{module}:{call.lineno} locks {model}"
        for module, call, model in locks
        if module not in TAKEN_BY[CASHIER_LOCKED[model]]
    ]
    assert not outside, f"cashier rows locked outside the lock modules of their ranks: {outside}"
    assert {model for _module, _call, model in locks} == set(CASHIER_LOCKED)


def test_the_cashier_rows_are_locked_leaving_commit_time_key_checks_alone() -> None:
    """FOR NO KEY UPDATE, never FOR UPDATE: a deferred foreign-key check at COMMIT (FOR KEY SHARE on the
    rows a transaction's inserts name: a ticket event its shift and ticket, a leg its account) never waits
    for a lock helper's row, so no commit waits outside the rank order (issue 30's three-way deadlock)."""
    for module, call, model in _row_locks():
        if model in CASHIER_LOCKED:
            no_key = {kw.arg: ast.unparse(kw.value) for kw in call.keywords}.get("no_key")
            assert no_key == "True", f"{module}:{call.lineno} locks {model} FOR UPDATE: use no_key=True"
