"""Shared fixtures: a venue with staff, a room with an open session, a card series, and a second venue.

Database tests run on PostgreSQL and broker/channel-layer tests on Redis (`make test` points at both);
a run configured for anything else stops here rather than testing the wrong thing.

The embedded hall's run (``HALL_TEST_DB=sqlite``, `make test`'s second run): the settings of `make demo`
without DATABASE_URL / REDIS_URL (SQLite, the in-memory channel layer, Celery on the in-memory broker), and
only the tests of SQLITE_SUITE: tests/sqlite (the SQLite branches, the embedded worker, the self-playing
demo) and the existing modules that walk the demo's code paths (draws, programs, pools, machines through
the gateway, the pages), which then run unchanged on SQLite.
"""

from __future__ import annotations

import json
import os
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User

from bingo.traditional.models import BallSet, CardSeries, Game
from bingo.traditional.services import games as game_services
from bingo.traditional.services import sales
from bingo.traditional.services import series as series_services
from halls import events
from halls.cashier.models import Till
from halls.models import GameSession, HallCategory, Jurisdiction, Role, Room, Screen, StaffRole, Venue
from halls.services import sessions
from tests.cashier_support import on_shift

ALL_BALLS = list(range(1, 91))
SEED = "0f" * 32


SQLITE_RUN = os.environ.get("HALL_TEST_DB", "") == "sqlite"
TESTS = Path(__file__).resolve().parent
# Run on SQLite too (paths under tests/): the demo's code paths, through tests written for PostgreSQL.
SQLITE_SUITE = (
    "sqlite",
    "link",
    "bingo/network/interconnected/test_interconnected.py",
    "bingo/network/interconnected/test_refusals.py",
    "bingo/network/interconnected/test_decide_property.py",
    "bingo/network/interconnected/test_api.py",
    "bingo/network/interconnected/test_gran.py",
    "bingo/network/interconnected/test_gran_operation.py",
    "bingo/network/simultaneous/test_network_game_gaps.py",
    "bingo/traditional/test_traditional_game.py",
    "bingo/traditional/test_inspector_records.py",
    "bingo/traditional/test_paper_cards.py",
    "bingo/traditional/test_paper_stock.py",
    "bingo/traditional/test_paper_migration.py",
    "bingo/traditional/test_game_services.py",
    "bingo/traditional/test_draw_step.py",
    "bingo/traditional/test_detection_services.py",
    "bingo/traditional/test_ball_sets.py",
    "bingo/traditional/test_device_switch.py",
    "bingo/traditional/test_demo_programs.py",
    "jackpots/test_services_contributions.py",
    "jackpots/test_services_meters_reports.py",
    "jackpots/test_services_awards.py",
    "jackpots/test_services_pools.py",
    "jackpots/test_network_pool_regions.py",
    "halls/test_regions.py",
    "tax",
    "halls/test_four_eyes.py",
    "halls/test_four_eyes_doors.py",
    # Issue 28 on the embedded hall: verifiable draws, display acknowledgements.
    "bingo/traditional/test_verifiable_draws.py",
    "bingo/electronic/test_verifiable_draw.py",
    "bingo/network/simultaneous/test_verifiable_network_draw.py",
    "halls/test_acks.py",
    "halls/test_screen_names.py",
    "halls/test_snapshot_cache.py",
    "bingo/electronic/test_terminal_snapshot_cache.py",
    "halls/test_check_events.py",
    "halls/test_check_refusals.py",
    "halls/test_lab_clock.py",
    "bingo/traditional/test_lab_clock_programs.py",
    "halls/test_typed_amounts.py",
    "bingo/traditional/test_colour_ranges.py",
    "halls/test_regions_property.py",
    "jackpots/test_pool_api.py",
    "jackpots/test_demo_seed.py",
    "jackpots/tables",
    "jackpots/widearea",
    "machines/test_gateway.py",
    "machines/test_gateway_batch.py",
    "machines/test_gateway_http.py",
    "machines/test_gateway_rows.py",
    "machines/test_hits.py",
    "machines/test_liveness_reads.py",
    "machines/test_floor_pages.py",
    "machines/test_demo_machines.py",
    "api/test_game_flow.py",
    "api/test_console.py",
    "cashier",
    "bingo/electronic/test_sales.py",
    "bingo/electronic/test_sales_terminals.py",
    "bingo/electronic/test_sales_concurrency.py",
    "bingo/electronic/test_game_known_balls.py",
    "bingo/electronic/test_ledger_property.py",
    "bingo/electronic/test_sales_batch_property.py",
    "bingo/electronic/test_game_resume.py",
    "bingo/electronic/test_automatic.py",
    "bingo/electronic/test_game_75.py",
    "bingo/electronic/test_terminal_api.py",
    "bingo/electronic/test_terminal_api_reads.py",
    "bingo/electronic/test_terminal_snapshot.py",
    "bingo/electronic/test_limits_purchases.py",
    "bingo/electronic/test_reports.py",
    "bingo/electronic/test_recall.py",
    "bingo/network/simultaneous",
    "door",
    "cage",
    "bingo/test_verifiable.py",
    # Issue 29: the feed's emit, outbox and sender, the regulator node's intake, the authority's portal.
    "feed",
    "regulator",
    "portal",
)


# Of those modules, the tests that measure PostgreSQL (its statements, FOR UPDATE) or need Redis: they run in
# the PostgreSQL run, and are left out of this one (deselected, not skipped).
SQLITE_DESELECT = (
    "link/test_link_contact.py::test_a_contact_does_not_wait_for_the_venue_s_messages_being_applied",
    "bingo/traditional/test_draw_step.py::test_a_step_reads_the_game_once_and_audits_and_numbers_in_few_statements",
    "bingo/traditional/test_draw_step.py::test_a_ball_completing_a_line_records_it_and_numbers_the_consoles_list",
    "machines/test_gateway.py::test_a_call_costs_a_few_statements_whatever_its_size",
    "machines/test_gateway_batch.py::test_a_batch_costs_the_same_statements_whatever_its_size",
    "machines/test_gateway_batch.py::test_the_door_takes_many_connections_frames_in_one_batch",
    "api/test_console.py::test_the_game_view_stays_small_with_20000_cards_sold",  # a scale test
    # The conditional triggers on a progressive hit (a hand pay written once) are PostgreSQL's only.
    "machines/test_hits.py::test_what_was_won_is_never_edited_and_a_hand_pay_is_written_once",
    # Table bets are grouped on PostgreSQL only (the group's own tests); SQLite writes each call inline.
    "jackpots/tables/test_bet_groups.py::test_grouped_bets_equal_one_by_one_to_the_micro_unit",
    "jackpots/tables/test_bet_groups.py::test_thirty_two_tables_share_transactions_and_one_refused_loses_nothing",
    "jackpots/tables/test_bet_groups.py::test_a_contribution_the_engine_refuses_sends_the_group_one_by_one",
    "jackpots/tables/test_bet_groups.py::test_a_group_the_database_refuses_is_written_one_by_one",
    "jackpots/tables/test_bet_groups.py::test_calls_of_one_hand_in_one_group_answer_as_one_after_the_other",
    "jackpots/tables/test_bet_groups.py::test_concurrent_api_requests_each_get_their_own_answer",
    "jackpots/tables/test_bet_groups.py::test_a_manual_total_in_a_group_contributes_once",
    # Purchases are grouped on PostgreSQL only (SQLite writes each inline).
    "bingo/electronic/test_sales_concurrency.py::test_purchases_at_once_share_groups",
    # The link process shares the test's database: PostgreSQL's (SQLite's is in this process's memory).
    "door/test_authority_link_process.py::test_run_link_sends_the_self_exclusion_to_the_authority",
    # Halls' sale reports at once on threads while the sales close: the game's FOR SHARE is PostgreSQL's.
    "bingo/network/simultaneous/test_sale_batches.py::test_halls_reporting_runs_at_once_while_the_sales_close_count_exactly",
    # Cashiers at once on threads: the row locks and the audit chain's lock are PostgreSQL's.
    "cage/test_gate_concurrency.py::test_a_split_paid_at_once_by_several_cashiers_is_flagged_once",
    # Two approvers at once on threads: the proposal's row lock is PostgreSQL's.
    "halls/test_four_eyes.py::test_two_approvers_at_once_apply_the_change_once",
    # The authority portal's socket through the Redis pub/sub layer (the embedded hall's layer is in memory).
    "portal/test_socket.py::test_the_authority_hears_each_message_accepted_and_nobody_else_joins",
    "portal/test_socket.py::test_off_the_regulators_node_the_socket_refuses_even_the_authority",
    # A screen's socket through the Redis pub/sub layer (the embedded hall's layer is in memory).
    "halls/test_acks.py::test_a_screen_acknowledges_what_it_was_sent_and_a_seq_never_sent_is_refused",
    # The door's count through the Redis pub/sub layer (the embedded hall's layer is in memory).
    "door/test_door_stream.py::test_the_door_hears_the_count_and_nobody_else_joins",
    # The ledger's group commits and their statements are PostgreSQL's (SQLite posts one by one).
    "cashier/test_ledger_group_statements.py",
)


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix: None) -> None:
    """The run's test database (each xdist worker's), made a copy of the run's migrated template
    (tests/migrated.py) before pytest-django sets it up: it then finds it whole and only checks that no
    migration is left, instead of migrating a database of its own (about a minute each)."""
    from django.db import connections

    from tests import migrated

    connection = connections["default"]
    name = connection.creation._get_test_db_name()  # type: ignore[attr-defined]  # (Django's, not in stubs)
    if connection.vendor == "postgresql":
        migrated.clone_postgresql(migrated.Server(connection.settings_dict), name)
    else:
        migrated.copy_sqlite(Path(name))


@pytest.fixture(scope="session")
def django_db_keepdb() -> bool:
    """Kept, not made again: django_db_modify_db_settings has just made it afresh from the template."""
    return True


@pytest.fixture(autouse=True, scope="session")
def _flush_past_the_sqlite_triggers() -> Any:
    """On SQLite a transactional test's flush empties the tables with DELETE, which the append-only triggers
    refuse (PostgreSQL's TRUNCATE passes its row triggers): the flush drops them and makes them again. On
    PostgreSQL it deletes the rows of the tables that have some instead of truncating every table
    (tests/fast_flush.py)."""
    from django.core.management.commands import flush

    if not SQLITE_RUN:
        from django.core.management.sql import sql_flush as truncating

        from tests import fast_flush

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(flush, "sql_flush", fast_flush.deleting(truncating))
            yield
        return

    from halls import sqlite_triggers

    original = flush.Command.handle

    def handle(self: flush.Command, **options: Any) -> None:
        database = options.get("database", "default")
        sqlite_triggers.drop(database)
        try:
            original(self, **options)
        finally:
            sqlite_triggers.install(database)

    flush.Command.handle = handle  # type: ignore[method-assign]
    yield
    flush.Command.handle = original  # type: ignore[method-assign]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if SQLITE_RUN:
        _sqlite_suite_only(config, items)
    _slowest_files_first(items)


def _slowest_files_first(items: list[pytest.Item]) -> None:
    """The files in the order of their last recorded durations, the longest first (tests/durations.json,
    scripts/test_durations.py), so the workers (`--dist loadfile --no-loadscope-reorder`) do not end the
    run with one of them alone on a long file; a file not recorded yet counts a second a test."""
    record = json.loads((TESTS / "durations.json").read_text()).get(
        "sqlite" if SQLITE_RUN else "postgresql", {}
    )
    per_file = Counter(item.nodeid.split("::")[0] for item in items)

    def longest_first(item: pytest.Item) -> tuple[float, str]:
        path = item.nodeid.split("::")[0]
        return -record.get(path, float(per_file[path])), path

    items.sort(key=longest_first)  # stable: each file's tests stay in their order


def _sqlite_suite_only(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept: list[pytest.Item] = []
    left: list[pytest.Item] = []
    for item in items:
        node = item.nodeid.removeprefix("tests/").split("[")[0]
        deselected = node in SQLITE_DESELECT or node.split("::")[0] in SQLITE_DESELECT  # a test, or its file
        (left if deselected else kept).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """On SQLite only SQLITE_SUITE is collected; on PostgreSQL everything but tests/sqlite."""
    try:
        relative = collection_path.resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return None
    if relative in ("", "."):
        return None
    if not SQLITE_RUN:
        return True if relative == "sqlite" or relative.startswith("sqlite/") else None
    if collection_path.is_dir():  # a folder is walked when it holds (or is inside) a chosen path
        inside = any(
            relative == p or relative.startswith(p + "/") or p.startswith(relative + "/")
            for p in SQLITE_SUITE
        )
        return None if inside else True
    if collection_path.name == "conftest.py":
        return None
    chosen = any(relative == p or relative.startswith(p + "/") for p in SQLITE_SUITE)
    return None if chosen else True


def pytest_configure(config: pytest.Config) -> None:
    _fast_password_hashes()
    _hypothesis_draws_from_strategies_alone()
    engine = settings.DATABASES["default"]["ENGINE"]
    if SQLITE_RUN:
        if "sqlite3" not in engine or settings.REDIS_URL:
            raise pytest.UsageError(
                "HALL_TEST_DB=sqlite runs the embedded hall: unset DATABASE_URL and REDIS_URL "
                f"(the database is {engine})."
            )
        return
    if "postgresql" not in engine:
        raise pytest.UsageError(
            f"The tests run on PostgreSQL, not {engine}: set DATABASE_URL (make test sets "
            "postgres://postgres@127.0.0.1:5432/hall by default)."
        )
    if not settings.REDIS_URL:
        raise pytest.UsageError(
            "The tests need Redis: set REDIS_URL (make test sets redis://127.0.0.1:6379/0)."
        )


def _hypothesis_draws_from_strategies_alone() -> None:
    """Hypothesis (6.1xx) mixes into its draws constants found in the project's modules imported so far,
    which depend on what earlier tests imported: a derandomized test then drew differently by test order
    (the cashier's ledger machine reached other rules in a CI worker than alone, and its check that every
    rule ran failed). Without them a derandomized test draws the same examples in any order."""
    from hypothesis.internal.conjecture import providers  # pinned hypothesis: an internal, checked here
    from hypothesis.internal.constants_ast import Constants

    no_constants = Constants()
    assert callable(providers._get_local_constants)
    providers._get_local_constants = lambda: no_constants


def _fast_password_hashes() -> None:
    """Passwords hashed at a test's cost, not production's (tests/hashers.py); set before any is hashed."""
    from django.test import override_settings

    override_settings(PASSWORD_HASHERS=["tests.hashers.FastPBKDF2PasswordHasher"]).enable()  # for the run


@pytest.fixture(autouse=True)
def _events_checked() -> Iterator[None]:
    """Every event a test emits is checked against its type (halls.eventtypes, zulip's event_schema): a
    payload off its type raises, and one whose error a caller swallowed fails the test here."""
    events.STRICT = True
    events.MISMATCHES.clear()
    yield
    assert not events.MISMATCHES, events.MISMATCHES


@pytest.fixture(autouse=True)
def _english(settings: Any) -> None:
    """The tests read English: a request that asks for no language, and code outside a request, get English
    (the hall's default is Spanish; tests that check it set LANGUAGE_CODE back to "es")."""
    settings.LANGUAGE_CODE = "en"


@pytest.fixture(autouse=True)
def _cards_without_admission(settings: Any) -> None:
    """Player cards without an admission at the door (HALL_DOOR_CARDS_NEED_ADMISSION, True by default): some
    35 test modules issue anonymous cards and play them, written before the door existed; the tests of the
    door's players (tests/door/test_players*.py) turn it on. Processes a test starts read the environment
    (the default, True)."""
    settings.HALL_DOOR_CARDS_NEED_ADMISSION = False


@pytest.fixture(autouse=True)
def _anchor_dir(settings: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Each test's audit anchors in a directory of its own (a test never sees another's chains)."""
    settings.HALL_AUDIT_ANCHOR_DIR = str(tmp_path_factory.mktemp("anchors"))


@pytest.fixture(autouse=True)
def _fresh_abuse_counters() -> None:
    """Each test starts with no throttle or lockout counts (they live in the Redis cache, under this run's
    own key prefix: nothing else in Redis is touched)."""
    clear_cache()


@pytest.fixture(autouse=True)
def _fresh_snapshot_cache() -> None:
    """Each test starts with no cached snapshot (halls.snapshot_cache): a test's "room.1" is not the last
    one's (ids are used again on SQLite)."""
    from halls import snapshot_cache

    snapshot_cache.cache().clear()


def clear_cache() -> None:
    from django.core.cache import cache

    prefix = settings.CACHES["default"].get("KEY_PREFIX")
    if not prefix:
        cache.clear()  # this process's memory
        return
    client = cache._cache.get_client(None, write=True)  # type: ignore[attr-defined]
    keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
    if keys:
        client.delete(*keys)


@pytest.fixture
def statements() -> Iterator[list[str]]:
    """Every SQL statement executed meanwhile, on any thread."""
    from django.db.backends.utils import CursorWrapper

    seen: list[str] = []
    execute = CursorWrapper.execute

    def counted(self: CursorWrapper, sql: str, params: Any = None) -> Any:
        seen.append(sql)
        return execute(self, sql, params)

    with mock.patch.object(CursorWrapper, "execute", counted):
        yield seen


@pytest.fixture
def isolated_layer(settings: Any) -> str:
    """The project's Redis pub/sub layer under a prefix of this test's own (returned), so no other run's
    events cross in."""
    layer = settings.CHANNEL_LAYERS["default"]
    assert layer["BACKEND"] == "channels_redis.pubsub.RedisPubSubChannelLayer", layer
    prefix = f"test-{uuid.uuid4().hex[:12]}"
    settings.CHANNEL_LAYERS = {"default": {**layer, "CONFIG": {**layer["CONFIG"], "prefix": prefix}}}
    return prefix


@pytest.fixture
async def layer(isolated_layer: str) -> AsyncIterator[Any]:
    channel_layer = get_channel_layer()
    yield channel_layer
    await channel_layer.flush()  # close this loop's Redis connections before the loop goes


def make_user(username: str, venue: Venue | None = None, role: str | None = None) -> User:
    user = get_user_model().objects.create_user(username=username, password="pw-" + username)
    if venue is not None and role is not None:
        StaffRole.objects.create(user=user, venue=venue, role=role)
    return user


@pytest.fixture
def venue(db: None) -> Venue:
    return Venue.objects.create(
        name="Bingo Melilla Centro",
        licence_number="ML-B-0001",
        jurisdiction=Jurisdiction.ML,
        hall_category=HallCategory.FIRST,
        time_zone="Africa/Ceuta",
        line_percent=Decimal("10"),
        bingo_percent=Decimal("50"),
    )


@pytest.fixture
def operator(venue: Venue) -> User:
    return make_user("operator", venue, Role.OPERATOR)


@pytest.fixture
def caller(venue: Venue) -> User:
    return make_user("caller", venue, Role.CALLER)


@pytest.fixture
def till(venue: Venue) -> Till:
    """The venue's till "Caja 1" (receipts as PDFs)."""
    return Till.objects.create(venue=venue, name="Caja 1")


@pytest.fixture
def cashier(request: pytest.FixtureRequest, venue: Venue) -> User:
    """A cashier ON SHIFT: an open shift on the `till` fixture with a float of 0.00 (card sales are cash into
    its drawer). Tests marked `cashier_off_shift` (module: ``pytestmark = pytest.mark.cashier_off_shift``)
    get the user with no shift and no till, and open one themselves; tests/cashier_support.on_shift puts
    other users on shift."""
    user = make_user("cashier", venue, Role.CASHIER)
    if request.node.get_closest_marker("cashier_off_shift") is None:
        on_shift(user, venue, float=Decimal("0"), till=request.getfixturevalue("till"))
    return user


@pytest.fixture
def room(venue: Venue) -> Room:
    return Room.objects.create(venue=venue, name="Sala 1", ball_pace_seconds=Decimal("0.5"))


@pytest.fixture
def screen(room: Room) -> Screen:
    return Screen.objects.create(venue=room.venue, room=room, name="Pantalla principal")


@pytest.fixture
def ball_set(venue: Venue, operator: User) -> BallSet:
    return series_services.create_ball_set(venue=venue, name="Juego 1", actor=operator)


@pytest.fixture
def card_series(venue: Venue, operator: User) -> CardSeries:
    """Ten strips (60 cards) of 2.00 € from a fixed seed, so the cards are the same in every run."""
    return series_services.create_series(
        venue=venue, code="A", face_value=Decimal("2.00"), strips=10, actor=operator, seed=SEED
    )


@pytest.fixture
def session(room: Room, caller: User) -> GameSession:
    return sessions.open_session(
        room=room, actor=caller, blower_ok=True, reserve_ok=True, reader_ok=True, inspection_balls=ALL_BALLS
    )


@pytest.fixture
def manual_game(session: GameSession, room: Room, caller: User, ball_set: BallSet) -> Game:
    """A game drawn by hand (blower and ball reader), scheduled."""
    return game_services.create_game(room=room, actor=caller, draw_source="manual")


@pytest.fixture
def drawing_game(manual_game: Game, card_series: CardSeries, caller: User, cashier: User) -> Game:
    """The manual game with twelve cards sold, its draw started and no ball yet."""
    game = game_services.open_sales(game=manual_game, actor=caller)
    sales.sell_range(game=game, series=card_series, first=1, last=12, actor=cashier)
    game_services.close_sales(game=game, actor=caller)
    return game_services.start_draw(game=game, actor=caller)


@pytest.fixture
def other_venue(db: None) -> Venue:
    return Venue.objects.create(
        name="Bingo Andalucía", licence_number="AN-B-0002", jurisdiction=Jurisdiction.AN10
    )
