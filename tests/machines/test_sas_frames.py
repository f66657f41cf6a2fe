"""machines.sas, the frames the SAS host bridge adds (issue 31): properties over every valid frame — each
round-trips through its decoder, any single corrupted byte is refused (CRC-16/KERMIT detects every
single-byte error), a truncated frame is refused, and the framing functions give each frame its length."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from machines import sas
from machines.sas import SasError

Case = tuple[bytes, tuple[Callable[[bytes], Any], Any]]
addresses = st.integers(1, 0x7F)
groups = st.integers(1, 0xFF)
levels = st.integers(1, 32)
amounts = st.integers(0, sas.MAX_AMOUNT_CENTS)
meter_values = st.integers(0, sas.MAX_METER)
codes = st.lists(st.sampled_from(sorted(sas.SELECTED_METER_SIZES)), min_size=1, max_size=8, unique=True)


@st.composite
def frames(draw: st.DrawFn) -> Case:
    """A valid EGM/host frame and the decoder that reads it back."""
    kind = draw(
        st.sampled_from(
            ["rte_start", "rte_end", "rte_door", "meters", "win", "handpay", "reset", "req", "control"]
        )
    )
    address = draw(addresses)
    if kind.startswith("rte"):
        code = {"rte_start": sas.EXCEPTION_GAME_STARTED, "rte_end": sas.EXCEPTION_GAME_ENDED}.get(
            kind, sas.EXCEPTION_SLOT_DOOR_OPENED
        )
        event = sas.RealTimeEvent(
            address,
            sas.classify_exception(code),
            credits_wagered=draw(st.integers(0, 9999)) if code == sas.EXCEPTION_GAME_STARTED else 0,
            coin_in_credits=draw(meter_values) if code == sas.EXCEPTION_GAME_STARTED else 0,
            wager_type=draw(st.integers(0, 255)) if code == sas.EXCEPTION_GAME_STARTED else 0,
            progressive_group=draw(st.integers(0, 255)) if code == sas.EXCEPTION_GAME_STARTED else 0,
            win_credits=draw(meter_values) if code == sas.EXCEPTION_GAME_ENDED else 0,
        )
        return sas.encode_real_time_event(event), (sas.decode_real_time_event, event)
    if kind == "meters":
        picked = draw(codes)
        pairs = [(c, draw(meter_values)) for c in picked]
        message = sas.encode_selected_meters_response(address, pairs)
        return message, (sas.decode_selected_meters_response, (address, 0, dict(pairs)))
    if kind == "win":
        win = sas.ProgressiveWin(address, draw(groups), draw(levels), draw(amounts))
        return sas.encode_progressive_win_response(win), (sas.decode_progressive_win_response, win)
    if kind == "handpay":
        info = sas.HandpayInfo(
            address,
            draw(groups),
            draw(st.sampled_from([0, 0x40, 0x80, *range(1, 33)])),
            draw(amounts),
            draw(st.integers(0, 9999)),
            draw(st.integers(0, 255)),
        )
        return sas.encode_handpay_info_response(info), (sas.decode_handpay_info_response, info)
    if kind == "reset":
        code = draw(st.sampled_from([0, 1, 2]))
        return (
            sas.encode_remote_handpay_reset_response(address, code),
            (sas.decode_remote_handpay_reset_response, (address, code)),
        )
    if kind == "control":
        enable = draw(st.booleans())
        return sas.encode_play_control(address, enable), (sas.decode_play_control, (address, enable))
    picked = draw(codes)
    game = draw(st.integers(0, 9999))
    return (
        sas.encode_selected_meters_request(address, picked, game),
        (sas.decode_selected_meters_request, (address, game, tuple(picked))),
    )


@settings(deadline=None)
@given(frames())
def test_every_frame_round_trips(case: Case) -> None:
    message, (decode, expected) = case
    assert decode(message) == expected


@settings(deadline=None)
@given(frames(), st.data())
def test_any_single_corrupted_byte_is_refused(case: Case, data: st.DataObject) -> None:
    message, (decode, _) = case
    index = data.draw(st.integers(0, len(message) - 1))
    flip = data.draw(st.integers(1, 255))
    broken = bytearray(message)
    broken[index] ^= flip
    with pytest.raises(SasError):
        decode(bytes(broken))
    assert not sas.check_crc(bytes(broken))


@settings(deadline=None)
@given(frames(), st.data())
def test_a_truncated_frame_is_refused(case: Case, data: st.DataObject) -> None:
    message, (decode, _) = case
    cut = data.draw(st.integers(0, len(message) - 1))
    with pytest.raises(SasError):
        decode(message[:cut])


@settings(deadline=None)
@given(frames())
def test_the_framing_functions_tell_each_frame_its_length(case: Case) -> None:
    message, (decode, _) = case
    if decode in (sas.decode_selected_meters_request, sas.decode_play_control):
        assert sas.host_message_length(message[:3]) == len(message)
        if decode is sas.decode_play_control:  # type S: answered by the one-byte ACK
            assert sas.response_length(message[1], bytes([message[0]])) == 1
        return
    command = None if message[1] == sas.REAL_TIME_MARKER else message[1]
    assert sas.response_length(command, message[:3]) == len(message)


@settings(deadline=None)
@given(
    addresses, groups, st.lists(st.tuples(levels, amounts), min_size=1, max_size=32, unique_by=lambda t: t[0])
)
def test_host_broadcasts_are_framed_by_their_first_bytes(
    address: int, group: int, pairs: list[tuple[int, int]]
) -> None:
    multi = sas.encode_multi_level_broadcast(group, pairs)
    assert sas.host_message_length(multi[:3]) == len(multi)
    single = sas.encode_single_level_broadcast(group, pairs[0][0], pairs[0][1], address)
    assert sas.host_message_length(single[:2]) == len(single)
    assert sas.host_message_length(sas.encode_general_poll(address)) == 1
    assert sas.host_message_length(sas.encode_remote_handpay_reset(address)[:2]) == 4


def test_an_unsolicited_frame_is_not_the_answer_asked_for() -> None:
    stray = sas.encode_progressive_win_response(sas.ProgressiveWin(1, 1, 1, 100))
    with pytest.raises(SasError, match="expected long poll 0x1b"):
        sas.decode_handpay_info_response(stray)
    with pytest.raises(SasError, match="one-byte answer"):
        sas.decode_real_time_event(b"\x51")


def test_real_time_game_events_carry_their_data() -> None:
    start = sas.RealTimeEvent(
        1, sas.classify_exception(0x7E), credits_wagered=5, coin_in_credits=1234, progressive_group=1
    )
    frame = sas.encode_real_time_event(start)
    assert frame[:3] == bytes([1, 0xFF, 0x7E]) and len(frame) == 13
    assert sas.decode_real_time_event(frame) == start
    assert sas.decode_real_time_event(b"\x00").exception.event is sas.PollEvent.NONE
