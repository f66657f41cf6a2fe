"""Verifiable draws in traditional rooms (issue 28): an RNG game's seed committed when the game is created,
its sales digest fixed at the close, every RNG ball the seed's, the seed revealed after the game on a public
page that verifies the draw; the standalone verifier agrees; a tampered seed or sales are named."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.test import Client
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from bingo import verifiable
from bingo.draws import seedbox
from bingo.draws import services as draws
from bingo.draws.models import DrawCommitment
from bingo.traditional.models import Ball, DrawSource, Game, SoldCard
from bingo.traditional.services import commitments, devices, draw, games, readmodels
from halls.errors import Conflict
from halls.models import AuditEntry
from tests.api_support import api_client
from tests.bingo.traditional.game_support import fresh_process, no_celery, rng_game  # noqa: F401
from tests.tampering import as_db_owner

pytestmark = pytest.mark.django_db

VERIFIER = Path(django_settings.BASE_DIR) / "scripts" / "verify_draw.py"


@pytest.fixture
def reveals(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The reveals the services enqueue (the worker's task), recorded instead of sent to the broker."""
    sent: list[int] = []
    monkeypatch.setattr(commitments, "_enqueue_reveal", sent.append)
    return sent


def draw_balls(game: Game, count: int) -> list[int]:
    for ordinal in range(game.balls_drawn + 1, game.balls_drawn + count + 1):
        assert draw.draw_rng_ball(game_id=game.pk, ordinal=ordinal) is not None
    return list(Ball.objects.filter(game=game).order_by("ordinal").values_list("number", flat=True))


def ref(game: Game) -> str:
    return commitments.game_ref(game.pk)


def end_and_reveal(
    game: Game, caller: Any, reveals: list[int], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        games.void_game(game=game, actor=caller, reason="test over")
    assert reveals == [game.pk]  # enqueued once the void committed
    commitments.reveal(game_id=game.pk, actor="rng")  # what the worker's task does


def test_an_rng_game_is_committed_when_created_and_a_blower_game_is_not(
    session: Any, room: Any, caller: Any, ball_set: Any
) -> None:
    game = games.create_game(room=room, actor=caller, draw_source=DrawSource.RNG)
    row = DrawCommitment.objects.get(room="traditional", game_ref=str(game.pk))
    assert game.draw_commitment == row.commitment and len(row.commitment) == 64
    assert Game.objects.get(pk=game.pk).draw_commitment == row.commitment
    created = AuditEntry.objects.get(action="game.created", object_id=str(game.pk))
    assert created.data["commitment"] == row.commitment
    assert AuditEntry.objects.filter(action="draw.committed", data__commitment=row.commitment).exists()
    shown = readmodels.screen_snapshot(room)["game"]["draw"]
    assert shown == {
        "verifiable": True,
        "commitment": row.commitment,
        "url": f"/draws/traditional/{game.pk}/",
    }
    games.void_game(game=game, actor=caller, reason="next")
    blower = games.create_game(room=room, actor=caller, draw_source=DrawSource.MANUAL)
    assert blower.draw_commitment == ""
    assert not DrawCommitment.objects.filter(game_ref=str(blower.pk)).exists()
    assert readmodels.game_summary(blower)["draw"] == {"verifiable": False, "commitment": "", "url": ""}


def test_with_the_setting_off_an_rng_game_commits_nothing_and_draws_as_before(
    session: Any, room: Any, caller: Any, cashier: Any, card_series: Any, ball_set: Any, settings: Any
) -> None:
    settings.HALL_VERIFIABLE_DRAWS = False
    game = rng_game(room, session, caller, cashier, card_series, pace="1", last=6)
    games.start_draw(game=game, actor=caller)
    balls = draw_balls(game, 5)
    assert len(set(balls)) == 5
    assert game.draw_commitment == "" and not DrawCommitment.objects.exists()
    assert readmodels.game_recall(game)["draw"]["verifiable"] is False


def test_the_balls_are_the_seeds_and_the_public_page_and_the_standalone_verifier_say_verified(
    session: Any, room: Any, caller: Any, cashier: Any, card_series: Any, ball_set: Any,
    reveals: list[int], django_capture_on_commit_callbacks: Any, tmp_path: Path,
) -> None:  # fmt: skip
    game = rng_game(room, session, caller, cashier, card_series, pace="1", last=12)
    row = DrawCommitment.objects.get(room="traditional", game_ref=ref(game))
    assert row.cards == 12 and row.sales_digest
    # The sales digest is the documented one, over "<series>-<serial>" and each card's 15 numbers.
    sold = SoldCard.objects.filter(game=game).select_related("card__series")
    expected = verifiable.Sales(
        game=f"traditional-{game.pk}",
        max_ball=90,
        cards=tuple(
            verifiable.SoldCard(f"{s.card.series.code}-{s.card.serial:04d}", tuple(bytes(s.card.numbers)))
            for s in sold
        ),
    )
    assert row.sales_digest == verifiable.sales_digest(expected)
    games.start_draw(game=game, actor=caller)
    balls = draw_balls(game, 25)

    client = Client()  # nobody logged in
    before = client.get(f"/draws/traditional/{game.pk}/")
    assert before.status_code == 200
    assert row.commitment in before.content.decode() and 'data-fact="seed"' in before.content.decode()
    assert 'class="draw-verdict"' not in before.content.decode()  # no verification before the reveal

    end_and_reveal(game, caller, reveals, django_capture_on_commit_callbacks)
    row.refresh_from_db()
    seed = bytes.fromhex(row.seed)
    assert balls == verifiable.balls(seed, row.sales_digest, 90, 25)
    recall = readmodels.game_recall(Game.objects.get(pk=game.pk))["draw"]
    assert (recall["seed"], recall["sales_digest"], recall["cards"]) == (row.seed, row.sales_digest, 12)

    page = client.get(f"/draws/traditional/{game.pk}/").content.decode()
    assert 'data-verified="yes"' in page and row.seed in page
    sales_file = client.get(f"/draws/traditional/{game.pk}/ventas.json")
    assert sales_file.status_code == 200 and sales_file["Content-Disposition"].endswith('.json"')
    data = json.loads(sales_file.content)
    assert verifiable.sales_digest(verifiable.sales_from_json(data)) == row.sales_digest
    (tmp_path / f"ventas-traditional-{game.pk}.json").write_bytes(sales_file.content)

    # The command line the page prints, run as printed from the folder with the sales file.
    command = page.split('data-fact="command">', 1)[1].split("</pre>", 1)[0]
    args = command.replace("&quot;", '"').split()
    assert args[:2] == ["python3", "scripts/verify_draw.py"]
    run = subprocess.run(
        [sys.executable, str(VERIFIER), *args[2:]], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("verified: the seed matches its commitment and all 25 balls")


def test_the_reveal_of_a_seed_replaced_after_its_commitment_is_refused_and_named(
    session: Any, room: Any, caller: Any, cashier: Any, card_series: Any, ball_set: Any,
    reveals: list[int], django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    game = rng_game(room, session, caller, cashier, card_series, pace="1", last=6)
    games.start_draw(game=game, actor=caller)
    draw_balls(game, 10)
    row = DrawCommitment.objects.get(room="traditional", game_ref=ref(game))
    forged = seedbox.seal(verifiable.new_seed(), draws.public_key(), row.game)
    with as_db_owner(DrawCommitment):
        DrawCommitment.objects.filter(pk=row.pk).update(sealed_seed=forged)
    commitments.forget(game.pk)  # a restarted worker: nothing of the game in memory
    with pytest.raises(Conflict) as refused:
        draw.draw_rng_ball(game_id=game.pk, ordinal=11)
    assert refused.value.code == "seed_mismatch"
    assert Game.objects.get(pk=game.pk).balls_drawn == 10  # nothing drawn from another seed
    with django_capture_on_commit_callbacks(execute=True):
        games.void_game(game=game, actor=caller, reason="tampered")
    with pytest.raises(Conflict) as refused:
        commitments.reveal(game_id=game.pk, actor="rng")
    assert refused.value.code == "seed_mismatch"
    assert DrawCommitment.objects.get(pk=row.pk).seed == ""
    assert not AuditEntry.objects.filter(action="draw.revealed").exists()


def test_a_revealed_seed_replaced_afterwards_fails_the_verification_by_its_commitment(
    session: Any, room: Any, caller: Any, cashier: Any, card_series: Any, ball_set: Any,
    reveals: list[int], django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    game = rng_game(room, session, caller, cashier, card_series, pace="1", last=6)
    games.start_draw(game=game, actor=caller)
    draw_balls(game, 8)
    end_and_reveal(game, caller, reveals, django_capture_on_commit_callbacks)
    other = verifiable.new_seed()
    with as_db_owner(DrawCommitment):
        DrawCommitment.objects.filter(room="traditional", game_ref=ref(game)).update(seed=other.hex())
    page = Client().get(f"/draws/traditional/{game.pk}/").content.decode()
    assert 'data-verified="no"' in page and 'data-reason="commitment_mismatch"' in page
    assert verifiable.commit(other) in page  # the SHA-256 of the seed shown, against the commitment


def test_sales_changed_after_the_close_are_named_and_a_second_close_is_refused(
    session: Any, room: Any, caller: Any, cashier: Any, card_series: Any, ball_set: Any,
    reveals: list[int], django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    game = rng_game(room, session, caller, cashier, card_series, pace="1", last=6)
    digest = DrawCommitment.objects.get(room="traditional", game_ref=ref(game)).sales_digest
    games.start_draw(game=game, actor=caller)
    draw_balls(game, 5)
    # A card slipped out of the sales after the close (the database owner, triggers off).
    with as_db_owner(SoldCard):
        SoldCard.objects.filter(game=game, card__serial=6).delete()
    with pytest.raises(Conflict) as refused:
        commitments.close_sales(game=game, actor=caller)
    assert refused.value.code == "sales_digest_differs"
    assert DrawCommitment.objects.get(room="traditional", game_ref=ref(game)).sales_digest == digest
    assert AuditEntry.objects.filter(action="draw.sales_closed").count() == 1  # nothing written
    end_and_reveal(game, caller, reveals, django_capture_on_commit_callbacks)
    page = Client().get(f"/draws/traditional/{game.pk}/").content.decode()
    assert 'data-verified="no"' in page and 'data-reason="sales_digest_mismatch"' in page


def test_a_switch_to_the_blower_leaves_the_seed_and_the_page_verifies_the_balls_before_it(
    session: Any, room: Any, caller: Any, cashier: Any, card_series: Any, ball_set: Any,
    reveals: list[int], django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    game = rng_game(room, session, caller, cashier, card_series, pace="1", last=6)
    games.start_draw(game=game, actor=caller)
    seeded = draw_balls(game, 7)
    blower = devices.register_device(room=room, name="Bombo", kind="pneumatic", actor=caller)
    reserve_rng = devices.register_device(room=room, name="RNG 2", kind="rng", actor=caller, reserve=True)
    devices.switch_device(game=game, device=blower, reason="test", actor=caller)
    left = next(n for n in range(1, 91) if n not in seeded)
    draw.enter_ball(game=Game.objects.get(pk=game.pk), number=left, actor=caller)
    devices.switch_device(game=Game.objects.get(pk=game.pk), device=reserve_rng, reason="back", actor=caller)
    after = draw_balls(Game.objects.get(pk=game.pk), 5)  # the CSPRNG's now, whatever the seed says
    assert len(set(after)) == 13
    end_and_reveal(Game.objects.get(pk=game.pk), caller, reveals, django_capture_on_commit_callbacks)
    page = Client().get(f"/draws/traditional/{game.pk}/").content.decode()
    assert 'data-verified="yes"' in page and "all 7 balls" in page


@hsettings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.binary(min_size=32, max_size=32),
    cards=st.dictionaries(
        st.from_regex(r"[A-Za-z0-9._-]{1,12}", fullmatch=True),
        st.sets(st.integers(1, 90), max_size=15),
        min_size=1,
        max_size=30,
    ),
)
def test_any_seed_and_sales_give_the_order_the_pure_core_and_the_check_recompute(
    seed: bytes, cards: dict[str, set[int]], venue: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the service level, over seeds and sales: the balls the worker draws are the order the pure core
    (and so the standalone verifier) derives from the revealed seed and the sales digest."""
    monkeypatch.setattr(verifiable, "new_seed", lambda: seed)
    game_ref = f"h{DrawCommitment.objects.count()}"
    sold = [(serial, sorted(numbers)) for serial, numbers in cards.items()]
    draws.commit_draw(venue_id=venue.pk, room="traditional", game_ref=game_ref, max_ball=90, actor="test")
    closed = draws.close_sales(room="traditional", game_ref=game_ref, cards=sold, actor="test")
    drawn = [draws.ball_at(room="traditional", game_ref=game_ref, ordinal=n) for n in range(1, 91)]
    revealed = draws.reveal(room="traditional", game_ref=game_ref, actor="test")
    assert bytes.fromhex(revealed.seed) == seed
    sales = draws.sales_of(closed, sold)
    assert drawn == verifiable.balls(seed, verifiable.sales_digest(sales), 90)
    assert draws.check(room="traditional", game_ref=game_ref, drawn=drawn, sales=sales).verified
    assert str(verifiable.verify(seed, revealed.commitment, closed.sales_digest, drawn[:40], 90)).startswith(
        "verified"
    )


def test_the_api_shows_the_commitment_and_the_recall_the_seed_once_revealed(
    session: Any, room: Any, caller: Any, cashier: Any, card_series: Any, ball_set: Any,
    reveals: list[int], django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    api = api_client(caller)
    game = rng_game(room, session, caller, cashier, card_series, pace="1", last=6)
    row = DrawCommitment.objects.get(room="traditional", game_ref=ref(game))
    shown = api.get(f"/api/games/{game.pk}/").json()["draw"]
    assert shown == {
        "verifiable": True,
        "commitment": row.commitment,
        "url": f"/draws/traditional/{game.pk}/",
    }
    assert api.get(f"/api/games/{game.pk}/recall/").json()["draw"]["seed"] == ""  # not before the reveal
    games.start_draw(game=game, actor=caller)
    draw_balls(game, 3)
    end_and_reveal(game, caller, reveals, django_capture_on_commit_callbacks)
    recall = api.get(f"/api/games/{game.pk}/recall/").json()["draw"]
    row.refresh_from_db()
    assert (recall["seed"], recall["sales_digest"], recall["cards"]) == (row.seed, row.sales_digest, 6)


def test_the_reaper_finds_the_ended_games_whose_reveal_was_lost(
    session: Any, room: Any, caller: Any, cashier: Any, card_series: Any, ball_set: Any,
    reveals: list[int], django_capture_on_commit_callbacks: Any,
) -> None:  # fmt: skip
    game = rng_game(room, session, caller, cashier, card_series, pace="1", last=6)
    games.start_draw(game=game, actor=caller)
    draw_balls(game, 3)
    ended = games.void_game(game=game, actor=caller, reason="broker away")  # its reveal never sent
    assert commitments.unrevealed() == []  # its own task still has time to run
    assert ended.closed_at is not None
    Game.objects.filter(pk=game.pk).update(closed_at=ended.closed_at - commitments.REVEAL_GRACE)
    assert commitments.unrevealed() == [game.pk]
    commitments.reveal(game_id=game.pk, actor="rng")
    assert commitments.unrevealed() == []
