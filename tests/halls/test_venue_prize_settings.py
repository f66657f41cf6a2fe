"""A venue's prize settings (Line and Bingo percentages, hall category) change through their service:
audited with the acting user and the old and new values, and refused (nothing written) while a game of the
venue is in play; the admin goes through it."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from bingo.traditional.models import Game
from bingo.traditional.services import games
from halls.errors import Conflict, InvalidInput, PermissionDenied
from halls.models import AuditEntry, GameSession, HallCategory, Proposal, Role, Room, Venue
from halls.services import proposals, venues
from halls.services.verify import verify_audit
from tests.conftest import make_user

CHANGE_PAGE = "/admin/halls/venue/{}/change/"
SETTINGS_PAGE = "/admin/halls/venue/{}/prize-settings/"


def percents(venue: Venue) -> tuple[Decimal, Decimal]:
    venue.refresh_from_db()
    return venue.line_percent, venue.bingo_percent


@pytest.fixture
def admin_client(operator: User) -> Client:
    operator.is_staff = operator.is_superuser = True
    operator.save()
    client = Client()
    client.force_login(operator)
    return client


def test_a_change_between_games_is_recorded_with_who_and_the_old_and_new_values(
    venue: Venue, operator: User
) -> None:
    venues.change_prize_settings(
        venue=venue, line_percent=Decimal("12"), bingo_percent=Decimal("55.5"), actor=operator
    )
    assert percents(venue) == (Decimal("12.00"), Decimal("55.50"))
    entry = AuditEntry.objects.get(venue=venue, action="venue.prize_settings_changed")
    assert entry.actor == operator
    assert entry.data == {
        "old": {"line_percent": "10.00", "bingo_percent": "50.00"},
        "new": {"line_percent": "12.00", "bingo_percent": "55.50"},
    }
    assert all(chain.ok for chain in verify_audit(venue_ids=[venue.pk]).chains)


def test_the_hall_category_alone_is_changed_and_recorded(venue: Venue, operator: User) -> None:
    venues.change_prize_settings(venue=venue, hall_category=HallCategory.SECOND, actor=operator)
    venue.refresh_from_db()
    assert venue.hall_category == HallCategory.SECOND
    entry = AuditEntry.objects.get(venue=venue, action="venue.prize_settings_changed")
    assert entry.data == {"old": {"hall_category": "1"}, "new": {"hall_category": "2"}}
    with pytest.raises(InvalidInput):
        venues.change_prize_settings(venue=venue, hall_category="4", actor=operator)


def test_the_same_values_change_nothing_and_record_nothing(venue: Venue, operator: User) -> None:
    venues.change_prize_settings(
        venue=venue, line_percent=Decimal("10"), bingo_percent=Decimal("50"), actor=operator
    )
    assert not AuditEntry.objects.filter(action="venue.prize_settings_changed").exists()


@pytest.mark.parametrize("on_sale", [False, True])
def test_a_game_in_play_refuses_the_change_and_nothing_is_written(
    session: GameSession, room: Room, caller: User, operator: User, on_sale: bool
) -> None:
    game = games.create_game(room=room, actor=caller, draw_source="manual")
    if on_sale:
        games.open_sales(game=game, actor=caller)
    entries = AuditEntry.objects.count()
    with pytest.raises(Conflict) as refused:
        venues.change_prize_settings(
            venue=room.venue, line_percent=Decimal("15"), bingo_percent=Decimal("60"), actor=operator
        )
    assert refused.value.code == "venue_busy"
    state = "on sale" if on_sale else "scheduled"
    assert f"game {game.number} in {room.name} is still {state}" in refused.value.message
    with pytest.raises(Conflict):
        venues.change_prize_settings(venue=room.venue, hall_category=HallCategory.THIRD, actor=operator)
    assert percents(room.venue) == (Decimal("10.00"), Decimal("50.00"))
    assert AuditEntry.objects.count() == entries


@pytest.mark.parametrize(("line", "bingo"), [("60", "50"), ("-1", "50"), ("10.001", "50"), ("10", "101")])
def test_percentages_outside_the_sales_are_refused(
    venue: Venue, operator: User, line: str, bingo: str
) -> None:
    with pytest.raises(InvalidInput):
        venues.change_prize_settings(
            venue=venue, line_percent=Decimal(line), bingo_percent=Decimal(bingo), actor=operator
        )
    assert percents(venue) == (Decimal("10.00"), Decimal("50.00"))
    assert not AuditEntry.objects.filter(action="venue.prize_settings_changed").exists()


def test_the_admin_shows_the_money_settings_read_only_and_links_their_page(
    venue: Venue, admin_client: Client
) -> None:
    page = admin_client.get(CHANGE_PAGE.format(venue.pk)).content.decode()
    for field in ("line_percent", "bingo_percent", "hall_category", "jurisdiction", "currency"):
        assert f'name="{field}"' not in page
    assert 'name="name"' in page  # the rest of the venue is edited here
    assert SETTINGS_PAGE.format(venue.pk) in page


def test_the_admin_page_proposes_them_and_a_second_operator_approves(
    venue: Venue, operator: User, admin_client: Client
) -> None:
    form = {"line_percent": "8", "bingo_percent": "52", "hall_category": "1"}
    answer = admin_client.post(SETTINGS_PAGE.format(venue.pk), form, follow=True)
    assert answer.redirect_chain == [(CHANGE_PAGE.format(venue.pk), 302)]
    assert "is proposed" in answer.content.decode()
    # Four eyes: nothing changes until a second operator approves the proposal.
    assert percents(venue) == (Decimal("10.00"), Decimal("50.00"))
    proposal = Proposal.objects.get(kind="venue.prize_settings")
    assert proposal.params == {"line_percent": "8.00", "bingo_percent": "52.00", "hall_category": "1"}
    with pytest.raises(PermissionDenied):
        proposals.approve(proposal=proposal, approver=operator, password="pw-operator")
    second = make_user("segunda", venue, Role.OPERATOR)
    # The second operator approves in the admin, with their own password.
    second.is_staff = True
    second.save()
    second.user_permissions.add(Permission.objects.get(codename="view_proposal"))
    client = Client()
    client.force_login(second)
    done = client.post(
        "/admin/halls/proposal/",
        {
            "action": "approve_proposal",
            "_selected_action": [proposal.pk],
            "decide": "1",
            "password": "pw-segunda",
        },
    )
    assert done.status_code == 302
    assert percents(venue) == (Decimal("8.00"), Decimal("52.00"))
    entry = AuditEntry.objects.get(venue=venue, action="venue.prize_settings_changed")
    assert entry.actor == second and entry.data["new"] == {"line_percent": "8.00", "bingo_percent": "52.00"}
    approval = AuditEntry.objects.get(venue=venue, action="foureyes.approved")
    assert approval.actor == second and approval.data["proposed_by"] == "operator"


def test_the_admin_page_says_why_during_a_game_and_writes_nothing(
    session: GameSession, room: Room, caller: User, admin_client: Client
) -> None:
    game = games.create_game(room=room, actor=caller, draw_source="manual")
    games.open_sales(game=game, actor=caller)
    entries = AuditEntry.objects.count()
    answer = admin_client.post(
        SETTINGS_PAGE.format(room.venue_id),
        {"line_percent": "8", "bingo_percent": "52", "hall_category": "1"},
    )
    assert answer.status_code == 200
    assert "change only between games" in answer.content.decode()
    assert percents(room.venue) == (Decimal("10.00"), Decimal("50.00"))
    assert AuditEntry.objects.count() == entries and not Proposal.objects.exists()
    assert Game.objects.get(pk=game.pk).line_percent == Decimal("10.00")


def test_the_next_game_copies_the_new_percentages_even_from_a_room_read_before(
    session: GameSession, room: Room, caller: User, operator: User
) -> None:
    assert room.venue.line_percent == Decimal("10")  # the room's venue, as a door read it before the change
    venues.change_prize_settings(
        venue=room.venue, line_percent=Decimal("12"), bingo_percent=Decimal("55"), actor=operator
    )
    game = games.create_game(room=room, actor=caller, draw_source="manual")
    assert (game.line_percent, game.bingo_percent) == (Decimal("12.00"), Decimal("55.00"))
