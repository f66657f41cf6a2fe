"""The verifiable common draw of electronic bingo (issue 28): committed when the sales open, the commitment
on the terminals' snapshot, the screens, the API and the recall; the sales digest fixed at their close; every
ball the seed's; the seed revealed after the game by the worker (the recall then says "verified"), the balls
recomputed by the standalone verifier; a replaced seed caught; a restarted worker going on with the same
sequence; the setting off drawing as before."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.db import transaction
from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bingo import verifiable
from bingo.draws import publish, rooms
from bingo.draws import services as draws
from bingo.draws.models import DrawCommitment
from bingo.electronic.models import EBall, EGameState, ElectronicGame
from bingo.electronic.services import commitments, detection, games, readmodels, recall, screens
from bingo.electronic.services.steps import rules_of
from halls.errors import Conflict
from halls.models import AuditEntry
from tests.bingo.electronic.support import (
    RULES_90,
    buy,
    enqueued,
    forced_balls,
    funded_card,
    make_speciality,
    make_terminal,
    open_verified_session,
)
from tests.tampering import as_db_owner

pytestmark = pytest.mark.django_db


def reader_of(room: str) -> rooms.Reader:
    """The room's reader, as the wing registered it at start-up."""
    found = rooms.reader(room)
    assert found is not None
    return found


ROOT = Path(__file__).resolve().parents[3]
VERIFIER = ROOT / "scripts" / "verify_draw.py"


@contextmanager
def reveals() -> Iterator[list[int]]:
    """The reveals the engine enqueues once a game's end commits, collected instead of sent to Celery."""
    asked: list[int] = []
    commitments.register_reveal_enqueuer(asked.append)
    try:
        yield asked
    finally:
        from bingo.electronic import tasks

        commitments.register_reveal_enqueuer(tasks.enqueue_reveal)


class Hall:
    """A speciality with its terminal and a funded player card, its game selling."""

    def __init__(self, venue: Any, operator: Any, cashier: Any, rules: dict[str, Any] | None = None) -> None:
        self.speciality = make_speciality(venue, operator, rules=rules)
        self.terminal, _ = make_terminal(self.speciality, operator)
        open_verified_session(self.speciality, operator)
        self.card = funded_card(venue, cashier, Decimal("500.00"))
        self.operator = operator
        self.bought = 0

    def next_game(self) -> ElectronicGame:
        games.set_running(speciality=self.speciality, running=True, actor=self.operator)
        return ElectronicGame.objects.get(speciality=self.speciality, state=EGameState.SELLING)

    def sell(self, game: ElectronicGame, seeds: list[bytes], per: int = 6) -> None:
        layout = rules_of(game.version).layout
        for seed in seeds:
            self.bought += 1
            faces = [tuple(card) for card in layout.deal(seed, per)]
            buy(game, self.terminal, self.card, faces, f"k{self.bought}")


def play(game: ElectronicGame, capture: Any, *, upto: int | None = None) -> ElectronicGame:
    """The game's ball steps in turn, each committed (its detector kept), to its end or ball `upto`."""
    for _ in range(90):
        game.refresh_from_db()
        if game.state != EGameState.DRAWING or (upto is not None and game.balls_drawn >= upto):
            break
        with capture(execute=True):
            assert games.draw_ball(game.pk, game.balls_drawn + 1) is not None
    game.refresh_from_db()
    return game


def drawn(game: ElectronicGame) -> list[int]:
    return list(EBall.objects.filter(game=game).order_by("ordinal").values_list("number", flat=True))


def run_verifier(tmp_path: Path, record: DrawCommitment, sales: verifiable.Sales, balls: list[int]) -> Any:
    sales_file = tmp_path / "sales.json"
    sales_file.write_text(json.dumps(verifiable.sales_to_json(sales)), encoding="utf-8")
    return subprocess.run(
        [
            sys.executable,
            str(VERIFIER),
            "--seed",
            record.seed,
            "--commitment",
            record.commitment,
            "--sales",
            str(sales_file),
            "--sales-digest",
            record.sales_digest,
            "--balls",
            ",".join(map(str, balls)),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,  # from any folder: the script finds its pure module itself
    )


def test_a_game_is_committed_at_its_opening_drawn_from_its_seed_revealed_and_verified_by_the_script(
    venue, operator, cashier, django_capture_on_commit_callbacks, tmp_path
) -> None:
    hall = Hall(venue, operator, cashier)
    with enqueued(), reveals() as asked:
        game = hall.next_game()
        row = commitments.committed(game.pk)
        assert row is not None and len(row.commitment) == 64 and not row.sales_digest
        # Published before any card is sold: the opening's audit entry, the terminal's snapshot, the screens.
        opened = AuditEntry.objects.get(action="egame.sales_opened", data__game=game.pk)
        assert opened.data["commitment"] == row.commitment
        snap = readmodels.terminal_snapshot(hall.terminal)
        assert snap["selling"]["draw"]["commitment"] == row.commitment
        assert snap["selling"]["draw"]["seed"] is None and snap["selling"]["draw"]["status"] == "committed"
        hall.sell(game, [bytes([n]) * 16 for n in range(1, 6)])
        with django_capture_on_commit_callbacks(execute=True):
            games.close_sales(game, early=True)
        row.refresh_from_db()
        sales = draws.sales_of(row, reader_of("electronic").sales(str(game.pk)))
        assert row.sales_digest == verifiable.sales_digest(sales) and row.cards == 30
        assert AuditEntry.objects.filter(action="draw.sales_closed", data__game=str(game.pk)).exists()
        # The room's screens: the game in play with its commitment and sales digest.
        on_screen = screens.screen_snapshot(hall.speciality.room)["current"]["draw"]
        assert on_screen["commitment"] == row.commitment and on_screen["sales_digest"] == row.sales_digest
        game = play(game, django_capture_on_commit_callbacks)
        assert game.state == EGameState.CLOSED and asked == [game.pk]
        # Before the reveal the recall shows the commitment and the digest, never the seed.
        before = recall.game_recall(game)["draw"]
        assert before["seed"] is None and before["verification"] is None
        assert before["sales_digest"] == row.sales_digest
        revealed = commitments.reveal(asked[0])
    assert revealed is not None and revealed.seed
    balls = drawn(game)
    assert balls == verifiable.balls(bytes.fromhex(revealed.seed), row.sales_digest, 90, len(balls))
    shown = recall.game_recall(game)["draw"]
    assert shown["seed"] == revealed.seed and shown["verification"]["verified"]
    assert readmodels.last_games(hall.speciality)[0]["draw"]["seed"] == revealed.seed
    done = run_verifier(tmp_path, revealed, sales, balls)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verified" in done.stdout
    # One ball changed: the script names where.
    changed = [*balls[:3], 91 - balls[3], *balls[4:]] if 91 - balls[3] not in balls else balls[::-1]
    differs = run_verifier(tmp_path, revealed, sales, changed)
    assert differs.returncode == 1 and "differs" in differs.stdout


def test_a_seed_replaced_after_the_commitment_is_caught(
    venue, operator, cashier, django_capture_on_commit_callbacks
) -> None:
    hall = Hall(venue, operator, cashier)
    with enqueued(), reveals():
        game = hall.next_game()
        other = draws.commit_draw(
            venue_id=venue.pk, room="electronic", game_ref="other-game", max_ball=90, actor="test"
        )
        hall.sell(game, [b"\x07" * 16])
        with django_capture_on_commit_callbacks(execute=True):
            games.close_sales(game, early=True)
        row = commitments.committed(game.pk)
        assert row is not None
        # Someone with the database swaps in another game's sealed seed: it does not open for this game,
        # so the ball step is refused and nothing is drawn.
        with as_db_owner(DrawCommitment):
            DrawCommitment.objects.filter(pk=row.pk).update(sealed_seed=bytes(other.sealed_seed))
        commitments.forget(game.pk)
        with pytest.raises(Conflict) as refused:
            games.draw_ball(game.pk, 1)
        assert refused.value.code == "seed_altered"
        assert not EBall.objects.filter(game=game).exists()
        with as_db_owner(DrawCommitment):
            DrawCommitment.objects.filter(pk=row.pk).update(sealed_seed=bytes(row.sealed_seed))
        commitments.forget(game.pk)  # the worker restarted once more: its own seed opens again
        game = play(game, django_capture_on_commit_callbacks)
        revealed = commitments.reveal(game.pk)
        assert revealed is not None
    # A seed replaced after the reveal: the recall's check names the commitment it no longer matches.
    with as_db_owner(DrawCommitment):
        DrawCommitment.objects.filter(pk=revealed.pk).update(seed="ab" * 32)
    verification = recall.game_recall(game)["draw"]["verification"]
    assert not verification["verified"] and verification["reason"] == "commitment_mismatch"


def test_a_restarted_worker_reopens_the_sealed_seed_and_goes_on_with_the_same_sequence(
    venue, operator, cashier, django_capture_on_commit_callbacks
) -> None:
    hall = Hall(venue, operator, cashier)
    with enqueued(), reveals():
        game = hall.next_game()
        hall.sell(game, [b"\x01" * 16, b"\x02" * 16])
        with django_capture_on_commit_callbacks(execute=True):
            games.close_sales(game, early=True)
        game = play(game, django_capture_on_commit_callbacks, upto=6)
        assert game.state == EGameState.DRAWING and game.balls_drawn == 6
        # The worker dies: its memory (the order, the detector, the key it read) is gone.
        commitments.forget(game.pk)
        draws._private_key.cache_clear()
        detection.forget()
        game = play(game, django_capture_on_commit_callbacks)
        revealed = commitments.reveal(game.pk)
    assert revealed is not None
    balls = drawn(game)
    assert len(balls) > 6
    assert balls == verifiable.balls(bytes.fromhex(revealed.seed), revealed.sales_digest, 90, len(balls))


def test_a_process_without_the_key_draws_nothing_and_the_beat_reveals_a_lost_reveal(
    venue, operator, cashier, django_capture_on_commit_callbacks, tmp_path
) -> None:
    hall = Hall(venue, operator, cashier)
    with enqueued(), reveals() as asked:
        game = hall.next_game()
        hall.sell(game, [b"\x03" * 16])
        with django_capture_on_commit_callbacks(execute=True):
            games.close_sales(game, early=True)
        row = commitments.committed(game.pk)
        assert row is not None
        public = draws.public_key()
        from bingo.draws import seedbox

        public_hex = seedbox.public_bytes(public).hex()
        # A web process: the public key only, no key file.
        with override_settings(
            HALL_DRAW_SEED_PUBLIC_KEY=public_hex, HALL_DRAW_SEED_KEY_FILE=str(tmp_path / "none.key")
        ):
            commitments.forget(game.pk)
            with pytest.raises(draws.SeedUnavailable):
                games.draw_ball(game.pk, 1)
        assert not EBall.objects.filter(game=game).exists()
        game = play(game, django_capture_on_commit_callbacks)
        assert asked == [game.pk]  # the task that was enqueued is lost: the beat reveals it
    done = games.tick()
    assert game.pk in done.revealed
    row.refresh_from_db()
    assert row.seed and verifiable.commit(bytes.fromhex(row.seed)) == row.commitment


def test_with_the_setting_off_nothing_is_committed_and_the_game_draws_as_before(
    venue, operator, cashier, django_capture_on_commit_callbacks
) -> None:
    hall = Hall(venue, operator, cashier)
    with override_settings(HALL_VERIFIABLE_DRAWS=False), enqueued(), reveals() as asked:
        game = hall.next_game()
        hall.sell(game, [b"\x04" * 16])
        with django_capture_on_commit_callbacks(execute=True):
            games.close_sales(game, early=True)
        game = play(game, django_capture_on_commit_callbacks)
    assert game.state == EGameState.CLOSED and len(drawn(game)) == game.balls_drawn
    assert commitments.committed(game.pk) is None and asked == []
    assert recall.game_recall(game)["draw"] is None
    assert "commitment" not in AuditEntry.objects.get(action="egame.sales_opened", data__game=game.pk).data


def test_a_rolled_back_game_a_test_picker_drew_leaves_the_next_game_its_seeds_balls(
    venue, operator, cashier, django_capture_on_commit_callbacks
) -> None:
    """SQLite gives a rolled-back game's id to the next game: the engine's test-only mark (a picker drew this
    game, its later balls are the CSPRNG's) stays with the game it was made for."""
    hall = Hall(venue, operator, cashier)
    with enqueued(), reveals():
        undone = transaction.savepoint()
        game = hall.next_game()
        hall.sell(game, [b"\x01" * 16], 1)
        with django_capture_on_commit_callbacks(execute=True):
            games.close_sales(game, early=True)
        with forced_balls([7]):
            play(game, django_capture_on_commit_callbacks, upto=1)
        transaction.savepoint_rollback(undone)
        game = hall.next_game()
        hall.sell(game, [b"\x02" * 16], 1)
        with django_capture_on_commit_callbacks(execute=True):
            games.close_sales(game, early=True)
        game = play(game, django_capture_on_commit_callbacks)
        revealed = commitments.reveal(game.pk)
    assert revealed is not None
    found = verifiable.verify(
        bytes.fromhex(revealed.seed), revealed.commitment, revealed.sales_digest, drawn(game), 90
    )
    assert found.verified, str(found)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seeds=st.lists(st.binary(min_size=16, max_size=16), min_size=1, max_size=4, unique=True),
    per=st.integers(min_value=1, max_value=6),
)
def test_any_sales_any_seed_the_balls_are_the_revealed_seeds_order(
    venue, operator, cashier, django_capture_on_commit_callbacks, seeds, per
) -> None:
    hall = Hall(venue, operator, cashier)
    with enqueued(), reveals():
        game = hall.next_game()
        hall.sell(game, seeds, per)
        with django_capture_on_commit_callbacks(execute=True):
            games.close_sales(game, early=True)
        game = play(game, django_capture_on_commit_callbacks)
        revealed = commitments.reveal(game.pk)
    assert revealed is not None
    reader = reader_of("electronic")
    sales = draws.sales_of(revealed, reader.sales(str(game.pk)))
    assert verifiable.check_sales(sales, revealed.sales_digest) is None
    seed, balls = bytes.fromhex(revealed.seed), reader.balls(str(game.pk))
    found = verifiable.verify(seed, revealed.commitment, revealed.sales_digest, balls, 90)
    assert found.verified, str(found)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 10**12), st.lists(st.integers(1, 90), unique=True, min_size=15, max_size=15)
        ),
        max_size=20,
        unique_by=lambda card: card[0],
    ),
    st.randoms(use_true_random=False),
)
def test_the_close_packs_each_card_as_the_sales_digest_takes_it(
    cards: list[tuple[int, list[int]]], rnd: Any
) -> None:
    """`packed` (what the close digests, the fast way) gives each card `sold`'s numbers: the digests agree."""
    import numpy as np

    rows = [rnd.sample([*numbers, 0, 0, 0], 18) for _, numbers in cards]  # free cells (0) anywhere
    ids = np.array([card_id for card_id, _ in cards], dtype=np.int64)
    cells = np.array(rows, dtype=np.uint8).reshape(len(cards), 18)
    packed = commitments.packed(ids, cells)
    assert [(serial, sorted(numbers)) for serial, numbers in packed] == [
        (serial, sorted(numbers)) for serial, numbers in commitments.sold(ids, cells)
    ]
    sold = tuple(
        verifiable.SoldCard(serial, tuple(numbers)) for serial, numbers in commitments.sold(ids, cells)
    )
    assert verifiable.sales_digest_of("electronic-1", 90, packed) == verifiable.sales_digest(
        verifiable.Sales("electronic-1", 90, sold)
    )


GOLDEN_RULES = {
    **RULES_90,
    "prizes": [
        *RULES_90["prizes"],
        {"code": "oro", "name": "Bola de oro", "type": "golden_ball", "fixed": "5.00"},
    ],
}


def test_the_golden_ball_is_the_seeds_and_the_public_page_and_the_script_check_it(
    venue, operator, cashier, django_capture_on_commit_callbacks, tmp_path, client
) -> None:
    hall = Hall(venue, operator, cashier, rules=GOLDEN_RULES)
    with enqueued(), reveals() as asked:
        game = hall.next_game()
        hall.sell(game, [bytes([n]) * 16 for n in range(1, 4)])
        with django_capture_on_commit_callbacks(execute=True):
            games.close_sales(game, early=True)
        game.refresh_from_db()
        golden = game.terms["golden_ball"]
        row = commitments.committed(game.pk)
        assert row is not None and isinstance(golden, int)
        # Before the reveal the page shows the golden ball drawn, but nobody can check it yet.
        before = publish.page("electronic", str(game.pk))
        assert before is not None and before.golden == golden and before.verification is None
        game = play(game, django_capture_on_commit_callbacks)
        revealed = commitments.reveal(asked[0])
    assert revealed is not None
    seed = bytes.fromhex(revealed.seed)
    assert golden == verifiable.golden_ball(seed, row.sales_digest, 90)
    page = publish.page("electronic", str(game.pk))
    assert page is not None and page.verification is not None
    assert page.verification.verified and page.verification.facts["golden"] == golden
    assert page.command.endswith(f"--golden {golden}") and str(golden) in page.verdict
    shown = client.get(f"/draws/electronic/{game.pk}/", HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert "Bola de oro (obtenida de la semilla al cierre de ventas)" in shown
    assert f'data-fact="golden">{golden}</dd>' in shown and "También" not in shown
    assert f"La bola de oro {golden} también se deduce de ellas." in shown
    # The standalone verifier, given the golden ball, agrees; given another, it names the golden ball.
    sales = draws.sales_of(row, reader_of("electronic").sales(str(game.pk)))
    sales_file = tmp_path / "sales.json"
    sales_file.write_text(json.dumps(verifiable.sales_to_json(sales)), encoding="utf-8")
    argv = [sys.executable, str(VERIFIER), "--seed", revealed.seed, "--commitment", revealed.commitment]
    argv += ["--sales", str(sales_file), "--balls", ",".join(map(str, drawn(game)))]
    done = subprocess.run([*argv, "--golden", str(golden)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "golden ball" in done.stdout, done.stdout + done.stderr
    other = golden % 90 + 1
    differs = subprocess.run([*argv, "--golden", str(other)], capture_output=True, text=True, timeout=60)
    assert differs.returncode == 1 and "golden ball differs" in differs.stdout
    # The golden ball rewritten in the game after it (the database owner): the page names the difference.
    with as_db_owner(ElectronicGame):
        ElectronicGame.objects.filter(pk=game.pk).update(terms={**game.terms, "golden_ball": other})
    tampered = publish.page("electronic", str(game.pk))
    assert tampered is not None and tampered.verification is not None
    assert tampered.verification.reason == "golden_differs"
    assert dict(tampered.verification.facts) == {"drawn": other, "expected": golden}
