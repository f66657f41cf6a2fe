"""The central's verifiable draw of a simultaneous game (issue 28): committed when its sales open, the
commitment sent to every hall with the opening; the sales digest over every card the halls' reports left
sold (the central's master cards), sent with the close; every ball the seed's; the seed revealed after the
game, audited, streamed, and checked by each hall against what it received before; a wrong reveal flagged."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.db import transaction
from django.test import override_settings

from bingo import verifiable
from bingo.draws import rooms
from bingo.draws import services as draws
from bingo.network.simultaneous.models import NetworkGame, NetworkGameState
from bingo.network.simultaneous.services import central, commitments, venue
from halls.link.kinds import LinkKind
from halls.link.services import streams
from halls.models import AuditEntry
from tests.bingo.network.simultaneous.support import Net, card, draw, make_network, new_game

pytestmark = pytest.mark.django_db


def reader_of(room: str) -> rooms.Reader:
    """The room's reader, as the wing registered it at start-up."""
    found = rooms.reader(room)
    assert found is not None
    return found


VERIFIER = Path(__file__).resolve().parents[4] / "scripts" / "verify_draw.py"


@pytest.fixture
def net(db: None) -> Net:
    return make_network()


@contextmanager
def reveals() -> Iterator[list[int]]:
    asked: list[int] = []
    commitments.register_reveal_enqueuer(asked.append)
    try:
        yield asked
    finally:
        from bingo.network.simultaneous import tasks

        commitments.register_reveal_enqueuer(tasks.enqueue_reveal)


def _sold_everywhere(net: Net, game: NetworkGame) -> dict[int, frozenset[int]]:
    """Each hall sells cards (the first also takes two back): the cards in play, serial -> numbers, as the
    halls' own copies of the series have them."""
    expected: dict[int, frozenset[int]] = {}
    for hall, count in zip(net.halls, (6, 4, 3), strict=True):
        hall_game = net.hall_game(hall, game)
        first = hall_game.first_serial
        venue.sell(hall_game=hall_game, first=first, last=first + count - 1, actor=hall.cashier)
        expected.update({s: card(hall_game, s).numbers for s in range(first, first + count)})
    one = net.hall_game(net.halls[0], game)
    venue.return_cards(
        hall_game=one, first=one.first_serial + 2, last=one.first_serial + 3, actor=net.halls[0].cashier
    )
    for serial in (one.first_serial + 2, one.first_serial + 3):
        del expected[serial]
    return expected


def test_the_network_draw_is_committed_digested_drawn_revealed_and_verified_in_every_hall(
    net: Net, django_capture_on_commit_callbacks, tmp_path: Path
) -> None:
    with reveals() as asked:
        game = new_game(net)
        row = commitments.committed(game)
        assert row is not None and row.venue_id is None and not row.sales_digest
        for hall in net.halls:
            # Every hall has the commitment before it sells, and its chain records it.
            assert net.hall_game(hall, game).announcement["draw"] == {"commitment": row.commitment}
            entry = AuditEntry.objects.get(venue=hall.venue, action="simultaneous.draw_committed")
            assert entry.data["commitment"] == row.commitment and "seed" not in entry.data
        expected = _sold_everywhere(net, game)
        net.sync()
        central.close_sales(game=game, actor=net.boss)
        row.refresh_from_db()
        # The digest is over the cards the halls' reports left sold, with the numbers the halls hold.
        sales = verifiable.Sales(
            game=f"simultaneous-{game.code}",
            max_ball=90,
            cards=tuple(verifiable.SoldCard(str(s), tuple(n)) for s, n in sorted(expected.items())),
        )
        assert row.sales_digest == verifiable.sales_digest(sales) and row.cards == 11
        central.start_draw(game=game, actor=net.boss)
        net.follow()
        for hall in net.halls:
            shown = net.hall_game(hall, game).announcement["draw"]
            assert shown["sales_digest"] == row.sales_digest and shown["cards"] == 11
        balls = list(draw(game, 90))
        order = verifiable.balls
        with (
            override_settings(HALL_SIMULTANEOUS_CLAIM_SECONDS=0),
            django_capture_on_commit_callbacks(execute=True),
        ):
            central.decide(game=game, actor=net.boss)
        game.refresh_from_db()
        assert game.state == NetworkGameState.CLOSED and asked == [game.pk]
        assert central.reveal_draw(game_id=game.pk)
        assert not central.reveal_draw(game_id=game.pk)  # once
    row.refresh_from_db()
    seed = bytes.fromhex(row.seed)
    assert balls == order(seed, row.sales_digest, 90)
    assert central_shown(game)["seed"] == row.seed
    net.follow()
    for hall in net.halls:
        checked = net.hall_game(hall, game).announcement["draw"]
        assert checked["seed"] == row.seed and checked["verification"]["verified"], checked
        assert AuditEntry.objects.get(venue=hall.venue, action="simultaneous.draw_checked").data["verified"]
    # The public page's reader gives the same sales; the standalone script says verified.
    reader = reader_of("simultaneous")
    read = draws.sales_of(row, reader.sales(game.code))
    assert verifiable.sales_digest(read) == row.sales_digest
    sales_file = tmp_path / "sales.json"
    sales_file.write_text(json.dumps(verifiable.sales_to_json(read)), encoding="utf-8")
    command = [sys.executable, str(VERIFIER), "--seed", row.seed, "--commitment", row.commitment]
    command += ["--sales", str(sales_file), "--balls", ",".join(map(str, reader.balls(game.code)))]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and "verified" in done.stdout, done.stdout + done.stderr


def central_shown(game: NetworkGame) -> dict[str, object]:
    shown = commitments.draw_view(game)
    assert shown is not None
    return shown


def test_a_reveal_that_does_not_match_what_a_hall_received_is_flagged_there(net: Net) -> None:
    game = new_game(net)
    _sold_everywhere(net, game)
    net.sync()
    central.close_sales(game=game, actor=net.boss)
    central.start_draw(game=game, actor=net.boss)
    net.follow()
    list(draw(game, 5))
    # A reveal on the stream whose seed is not the committed one (a central that changed its seed).
    with transaction.atomic():
        streams.append(
            stream=game.stream,
            kind=LinkKind.SB_DRAW_REVEALED,
            payload={"game": game.code, "seed": "cd" * 32, "commitment": "ef" * 32},
        )
    net.follow()
    for hall in net.halls:
        checked = net.hall_game(hall, game).announcement["draw"]
        assert checked["verification"]["verified"] is False
        assert checked["verification"]["reason"] == "commitment_mismatch"
        entry = AuditEntry.objects.get(venue=hall.venue, action="simultaneous.draw_checked")
        assert entry.data["verified"] is False


def test_with_the_setting_off_the_central_draws_as_before(net: Net) -> None:
    with override_settings(HALL_VERIFIABLE_DRAWS=False):
        game = new_game(net)
        _sold_everywhere(net, game)
        net.sync()
        central.close_sales(game=game, actor=net.boss)
        central.start_draw(game=game, actor=net.boss)
        net.follow()
        balls = list(draw(game, 10))
    assert commitments.committed(game) is None and len(set(balls)) == 10
    assert "draw" not in net.hall_game(net.halls[0], game).announcement
