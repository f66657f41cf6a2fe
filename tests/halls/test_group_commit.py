"""The one setup of the per-process group commits (halls.group_commit.ProcessGroup): each user sized and
switched by its own settings (pool contributions HALL_POOL_GROUP_*, casino tables' bets HALL_TABLE_GROUP_*,
electronic purchases HALL_SALES_GROUP_*), one group per process, a new one after a fork."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence

import pytest
from django.db import connection
from pytest_django.fixtures import Settings as SettingsWrapper

from bingo.electronic.services import sales
from halls.group_commit import GroupSettings, ProcessGroup, answer_of, together_or_one_by_one
from jackpots.services import contributions
from jackpots.tables.services import bets

_pids = itertools.count(10_000_000)


def _forked(monkeypatch: pytest.MonkeyPatch) -> int:
    """As if this were a new child process (a pid no group was made in)."""
    pid = next(_pids)
    monkeypatch.setattr("halls.group_commit.os.getpid", lambda: pid)
    return pid


def _sizes(settings: SettingsWrapper) -> None:
    settings.HALL_POOL_GROUP_SIZE, settings.HALL_POOL_GROUP_WAIT_MS, settings.HALL_POOL_GROUP_RUNNERS = (
        11,
        3.0,
        1,
    )
    settings.HALL_TABLE_GROUP_SIZE, settings.HALL_TABLE_GROUP_WAIT_MS, settings.HALL_TABLE_GROUP_RUNNERS = (
        7,
        5.0,
        3,
    )
    settings.HALL_SALES_GROUP_SIZE, settings.HALL_SALES_GROUP_WAIT_MS, settings.HALL_SALES_GROUP_RUNNERS = (
        5,
        1.0,
        4,
    )


def test_each_user_is_sized_by_its_own_settings(
    settings: SettingsWrapper, monkeypatch: pytest.MonkeyPatch
) -> None:
    _sizes(settings)
    _forked(monkeypatch)
    pool, table, purchase = contributions.group_commit(), bets.bet_group(), sales.purchase_group()
    assert (pool.size, pool.wait, pool.runners) == (11, 0.003, 1)
    assert (table.size, table.wait, table.runners) == (7, 0.005, 3)
    assert (purchase.size, purchase.wait, purchase.runners) == (5, 0.001, 4)
    assert len({id(pool), id(table), id(purchase)}) == 3


def test_a_process_keeps_its_group_and_a_forked_child_makes_its_own(
    settings: SettingsWrapper, monkeypatch: pytest.MonkeyPatch
) -> None:
    _sizes(settings)
    _forked(monkeypatch)
    parent = bets.bet_group()
    assert bets.bet_group() is parent
    settings.HALL_TABLE_GROUP_SIZE = 9  # read when a group is made, not on every call
    assert bets.bet_group().size == 7
    _forked(monkeypatch)
    child = bets.bet_group()
    assert child is not parent and child.size == 9


def test_switching_one_user_off_leaves_the_others_grouped(settings: SettingsWrapper) -> None:
    postgresql = connection.vendor == "postgresql"
    settings.HALL_POOL_GROUP_COMMIT, settings.HALL_TABLE_GROUP_COMMIT, settings.HALL_SALES_GROUP_COMMIT = (
        True,
        False,
        True,
    )
    assert not bets._grouped()
    assert sales._grouped() is postgresql
    settings.HALL_TABLE_GROUP_COMMIT, settings.HALL_SALES_GROUP_COMMIT = True, False
    assert bets._grouped() is postgresql
    assert not sales._grouped()


def test_settings_left_unset_take_the_defaults(settings: SettingsWrapper) -> None:
    for name in ("COMMIT", "SIZE", "WAIT_MS", "RUNNERS"):
        assert not hasattr(settings, f"HALL_UNSET_GROUP_{name}")
    assert GroupSettings.of("HALL_UNSET_GROUP") == GroupSettings(commit=True, size=64, wait_ms=2.0, runners=2)
    settings.HALL_UNSET_GROUP_COMMIT, settings.HALL_UNSET_GROUP_RUNNERS = False, 5
    assert GroupSettings.of("HALL_UNSET_GROUP") == GroupSettings(
        commit=False, size=64, wait_ms=2.0, runners=5
    )


def test_a_process_group_writes_what_its_user_gives_it(settings: SettingsWrapper) -> None:
    settings.HALL_DOUBLE_GROUP_SIZE, settings.HALL_DOUBLE_GROUP_WAIT_MS = 4, 0.0
    written: list[list[int]] = []

    def write_many(items: Sequence[int]) -> list[int | BaseException]:
        written.append(list(items))
        return [item * 2 for item in items]

    group: ProcessGroup[int, int] = ProcessGroup(write_many, "HALL_DOUBLE_GROUP")
    assert group.enabled()
    assert [group.get().submit(n) for n in (1, 2, 3)] == [2, 4, 6]
    assert written == [[1], [2], [3]]  # a lone caller does not wait for company


def test_a_group_that_cannot_commit_is_written_one_by_one_each_with_its_own_answer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = logging.getLogger("hall.test.groups")
    calls: list[str] = []

    def together(items: Sequence[int]) -> list[int | BaseException]:
        calls.append(f"together {list(items)}")
        if 3 in items:
            raise RuntimeError("deadlock detected")
        return [item * 10 for item in items]

    def alone(item: int) -> int:
        calls.append(f"alone {item}")
        if item == 3:
            raise ValueError("refused: 3")
        return item * 10

    assert together_or_one_by_one([1, 2], together, alone, log=log, what="tries") == [10, 20]
    with caplog.at_level(logging.WARNING, logger="hall.test.groups"):
        answers = together_or_one_by_one([1, 3, 2], together, alone, log=log, what="tries")
    assert answers[0] == 10 and answers[2] == 20
    assert isinstance(answers[1], ValueError) and str(answers[1]) == "refused: 3"
    assert "a group of 3 tries failed: writing them one by one" in caplog.text
    assert together_or_one_by_one([4], together, alone, log=log, what="tries") == [40]  # one: alone
    assert calls == ["together [1, 2]", "together [1, 3, 2]", "alone 1", "alone 3", "alone 2", "alone 4"]
    assert isinstance(answer_of(alone, 3), ValueError) and answer_of(alone, 5) == 50
