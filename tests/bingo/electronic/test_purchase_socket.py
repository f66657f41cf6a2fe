"""Purchases over the terminal's WebSocket (bingo.electronic.purchase_frames), through config.asgi on the
Redis layer: a frame answered by a frame with its key and the HTTP door's body, a retry answered with the
first purchase and nothing written, bad frames and refusals answered with a clear error (the HTTP door's
codes, in the asker's language) and nothing written."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings as django_settings
from django.contrib.auth.models import User

from bingo.electronic import consumers, purchase_frames
from bingo.electronic.models import ECard, Purchase, Terminal, TerminalState
from bingo.electronic.services import messages, sales
from config.asgi import application
from halls import fanout
from halls.cashier.models import LedgerTransaction, TxKind
from halls.cashier.services import devices, player_cards
from halls.models import AuditEntry, Venue
from tests.bingo.electronic.sales_support import OnSale, on_sale

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 5


@pytest.fixture
async def layer(settings: Any) -> AsyncIterator[Any]:
    """The Redis pub/sub layer of production, under a prefix of its own."""
    config = django_settings.CHANNEL_LAYERS["default"]
    settings.CHANNEL_LAYERS = {
        "default": {**config, "CONFIG": {**config["CONFIG"], "prefix": f"test-buy-{uuid.uuid4().hex[:12]}"}}
    }
    channel_layer = get_channel_layer()
    yield channel_layer
    await channel_layer.flush()


@pytest.fixture
def sale(venue: Venue, operator: User, cashier: User) -> OnSale:
    return on_sale(venue, operator, cashier)


async def connect(terminal: Terminal, token: str, language: str = "es") -> WebsocketCommunicator:
    path = f"/ws/electronic/terminal/?device={terminal.device_id}&token={token}"
    communicator = WebsocketCommunicator(application, path, headers=[(b"accept-language", language.encode())])
    connected, code = await communicator.connect(timeout=TIMEOUT)
    assert connected, code
    return communicator


async def answer(communicator: WebsocketCommunicator) -> dict[str, Any]:
    """The next purchase answer (the terminal's own events in between are skipped)."""
    while True:
        frame: dict[str, Any] = json.loads(await communicator.receive_from(timeout=TIMEOUT))
        if frame.get("type") == purchase_frames.ANSWER:
            return frame


def written() -> tuple[int, int, int, int]:
    return (
        Purchase.objects.count(),
        ECard.objects.count(),
        LedgerTransaction.objects.filter(kind=TxKind.CARD_SPEND).count(),
        AuditEntry.objects.count(),
    )


def order(sale: OnSale, key: str = "k1", **fields: Any) -> str:
    return json.dumps(
        {"type": "purchase", "key": key, "card": sale.card.number, "cards": 2, "game": sale.game.pk, **fields}
    )


async def test_a_purchase_frame_is_answered_with_its_key_and_the_http_body_and_a_retry_writes_nothing(
    layer: Any, sale: OnSale
) -> None:
    socket = await connect(sale.terminal, sale.token)
    await socket.send_to(text_data=order(sale))
    bought = await answer(socket)
    assert bought["key"] == "k1" and bought["status"] == 201, bought
    purchase = await database_sync_to_async(
        lambda: Purchase.objects.select_related("player_card").get(terminal=sale.terminal, key="k1")
    )()
    result = bought["result"]
    assert result["purchase"] == purchase.pk and result["amount"] == "1.00" and result["balance"] == "19.00"
    assert len(result["cards"]) == 2 and result["replayed"] is False
    assert await database_sync_to_async(lambda: player_cards.balance(sale.card))() == Decimal("19.00")
    before = await database_sync_to_async(written)()

    # The same frame again (an answer lost, say): the first purchase, nothing written.
    await socket.send_to(text_data=order(sale))
    again = await answer(socket)
    assert again["status"] == 200 and again["result"] == {**result, "replayed": True}
    # The HTTP door's body: the same service's answer.
    first = await database_sync_to_async(
        lambda: sales.prepare(terminal=sale.terminal, card_number=sale.card.number, cards=2, key="k1")
    )()
    assert isinstance(first, sales.Bought) and again["result"] == messages.purchase_answer(first)
    assert await database_sync_to_async(written)() == before
    # The same key for another purchase: 409 key_reused.
    await socket.send_to(text_data=order(sale, cards=3))
    reused = await answer(socket)
    assert reused["status"] == 409 and reused["error"]["code"] == "key_reused"
    assert await database_sync_to_async(written)() == before
    await socket.disconnect()


async def test_bad_frames_are_answered_with_a_clear_error_and_nothing_written(
    layer: Any, sale: OnSale
) -> None:
    socket = await connect(sale.terminal, sale.token, language="en")
    cases = [
        ("not json", None, 400, "malformed_json"),
        ("[1, 2]", None, 400, "malformed_json"),
        (json.dumps({"type": "cashout", "key": "c1"}), "c1", 400, "unknown_type"),
        (order(sale, key="x" * 61), "x" * 61, 400, "bad_key"),
        (order(sale, key="b1", cards="2"), "b1", 400, "bad_count"),
        (order(sale, key="b2", cards=7), "b2", 409, "bad_count"),  # not a size on sale
        (order(sale, key="b3", card="12345"), "b3", 400, "bad_card_number"),
        (order(sale, key="b4", game="x"), "b4", 400, "bad_game"),
        (order(sale, key="b5", game=sale.game.pk + 1000), "b5", 409, "sales_closed"),
        (order(sale, key="b6", cards=6, lang="es"), "b6", 409, "insufficient_balance"),
        (json.dumps({"type": "purchase", "key": "b7", "pad": "x" * 3000}), None, 413, "too_large"),
    ]
    funded = await database_sync_to_async(lambda: player_cards.balance(sale.card))()
    await database_sync_to_async(
        lambda: player_cards.spend(card=sale.card, amount=funded - Decimal("2.00"), key="drain", actor="test")
    )()
    before = await database_sync_to_async(written)()
    for frame, key, status, code in cases:
        await socket.send_to(text_data=frame)
        got = await answer(socket)
        assert (got["key"], got["status"], got["error"]["code"]) == (key, status, code), (frame[:80], got)
        assert got["error"]["message"]
    # The messages are in the asker's language: the handshake's (English), or the frame's own (Spanish).
    await socket.send_to(text_data=order(sale, key="b8", cards=7))
    assert "cards" in (await answer(socket))["error"]["message"]
    await socket.send_to(text_data=order(sale, key="b9", cards=7, lang="es"))
    assert "cartones" in (await answer(socket))["error"]["message"]
    assert await database_sync_to_async(written)() == before
    # A frame far beyond any purchase closes the socket.
    await socket.send_to(text_data="x" * (purchase_frames.ABUSE_BYTES + 1))
    assert await socket.receive_output(timeout=TIMEOUT) == {
        "type": "websocket.close",
        "code": consumers.CLOSE_TOO_BIG,
    }


async def test_a_blocked_card_and_a_terminal_that_failed_its_verification_are_refused(
    layer: Any, sale: OnSale, operator: User
) -> None:
    socket = await connect(sale.terminal, sale.token)
    await database_sync_to_async(
        lambda: player_cards.block_card(card=sale.card, reason="lost", actor=operator)
    )()
    before = await database_sync_to_async(written)()
    await socket.send_to(text_data=order(sale, key="blocked"))
    got = await answer(socket)
    assert (got["key"], got["status"], got["error"]["code"]) == ("blocked", 409, "card_blocked")

    await database_sync_to_async(
        lambda: Terminal.objects.filter(pk=sale.terminal.pk).update(state=TerminalState.FAILED)
    )()
    await socket.send_to(text_data=order(sale, key="failed"))
    got = await answer(socket)
    assert (got["status"], got["error"]["code"]) == (409, "terminal_not_verified")
    assert await database_sync_to_async(written)() == before
    await socket.disconnect()


async def test_a_socket_whose_token_was_rotated_buys_nothing(layer: Any, sale: OnSale) -> None:
    socket = await connect(sale.terminal, sale.token)
    device = await database_sync_to_async(lambda: sale.terminal.device)()
    await database_sync_to_async(devices.rotate_token)(device=device, actor="test")
    before = await database_sync_to_async(written)()
    await socket.send_to(text_data=order(sale))
    # Refused by the door, or closed first by the hub's re-check the rotation asked for (which of the two
    # comes first is a race between the purchase batch and the re-check): either way nothing is bought.
    while (output := await socket.receive_output(timeout=TIMEOUT))["type"] == "websocket.send":
        frame = json.loads(output["text"])
        if frame.get("type") == purchase_frames.ANSWER:
            assert (frame["status"], frame["error"]["code"]) == (401, "token_revoked")
            break
    else:
        assert output == {"type": "websocket.close", "code": fanout.CLOSE_GONE}
    assert await database_sync_to_async(written)() == before
    await socket.disconnect()


async def test_purchases_of_many_sockets_are_written_in_batches_each_exact(
    layer: Any, sale: OnSale, operator: User, cashier: User, venue: Venue
) -> None:
    from tests.bingo.electronic.sales_support import more_terminals
    from tests.bingo.electronic.support import funded_card

    extra = await database_sync_to_async(lambda: more_terminals(sale, operator, 5))()
    cards_of = await database_sync_to_async(lambda: [funded_card(venue, cashier) for _ in extra])()
    sockets = [await connect(terminal, token) for terminal, token in extra]
    batcher = purchase_frames.batcher()
    batches = batcher.batches
    for i, (socket, card) in enumerate(zip(sockets, cards_of, strict=True)):
        await socket.send_to(
            text_data=json.dumps(
                {"type": "purchase", "key": f"m{i}", "card": card.number, "cards": 1 + i % 3, "game": None}
            )
        )
    got = [await answer(socket) for socket in sockets]
    assert [g["status"] for g in got] == [201] * len(sockets)
    assert batcher.batches - batches < len(sockets)  # together, not one by one
    for g, card, i in zip(got, cards_of, range(len(sockets)), strict=True):
        spent = Decimal("0.50") * (1 + i % 3)
        assert g["result"]["balance"] == str(Decimal("20.00") - spent)
        assert (
            await database_sync_to_async(lambda c=card: player_cards.balance(c))() == Decimal("20.00") - spent
        )
    for socket in sockets:
        await socket.disconnect()
