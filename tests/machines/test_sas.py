"""machines.sas: SAS frames for a linked progressive controller, checked against frames worked out by hand.

Layouts were checked against (see the module docstring for the full list):
* tejvirc/Platform, Protocol/SAS/Aristocrat.Sas.Client/LPParsers/
  LP80SingleLevelProgressiveBroadcastParser.cs and LP86MultipleLevelProgressiveBroadcastParser.cs
  @ c5b1311973f4c8602d69000ae886151e3ecf531f,
  LP1CSendMetersParser.cs @ d153cca961428a7fce08d3d4c42735bb5d47b064,
  LP0FSendMeters10Through15Parser.cs @ c5b1311973f4c8602d69000ae886151e3ecf531f, GeneralExceptionCode.cs and
  SasConstants.cs @ 975fe8fdc5f74ac6f4725fbf3c535ac9412817cf, Utilities.cs (CRC, BCD)
  @ 26c9860b278c495874ed2f2fabc58d343b6d3bd8.
* lakeshsharma/nCompass @ 5453debb29f7409772a2f0ef9f9127ebbcdc6dba, Sentinel/SASProtocol/
  LongPoll80Message.h (11-byte poll), LongPoll86Message.h (6 + 6 x levels, at most 32), SASLimits.h,
  LongPoll1CMessage.cpp (2-byte request, 36-byte response), SASGeneralPoll.cpp (address | 0x80).
* marcrdavis/ArduinoTITO-PlayerTracking @ 0eaefaa7956342b9ae2b3b4f33ddb3b331901441,
  ArduinoTITODeluxeR4WiFi/src/ArduinoTITODeluxeR4Wifi/ArduinoTITODeluxeR4Wifi.ino: the frame
  ``transComplete = {0x01, 0x71, 0x01, 0xFF, 0x1F, 0xD0}`` that device sends to real machines.

How the CRCs below were worked out: the SAS routine both stacks use (Aristocrat Utilities.GenerateCrc,
nCompass CSASPollMessage::CRC) takes each byte c in two nibble steps, low nibble first:

    q = (crc ^ c) & 0xF;         crc = (crc >> 4) ^ (q * 0x1081)
    q = (crc ^ (c >> 4)) & 0xF;  crc = (crc >> 4) ^ (q * 0x1081)

starting from crc = 0; the two CRC bytes are then sent low byte first. 0x1081 is octal 010201, and
q * 0x1081 is q, q << 7 and q << 12 xor-ed together (e.g. 8 * 0x1081 = 0x8408, 9 * 0x1081 = 0x9489).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from machines import sas
from machines.sas import SasError

# --- hand-worked frames ---------------------------------------------------------------------------------

# CRC-16/KERMIT check value from the CRC catalogue: CRC("123456789") = 0x2189.
CHECK_INPUT = b"123456789"
CHECK_VALUE = 0x2189

# Arduino TITO's "transComplete" (LP 0x71) as it sends it: 01 71 01 FF, CRC 1F D0.
# Nibble steps (byte, half, q, crc after):
#   01 lo q=1 crc=0000>>4 ^ 1081 = 1081      01 hi q=(1081^0)&F=1 crc=0108 ^ 1081 = 1189
#   71 lo q=(9^1)=8 crc=0118 ^ 8408 = 8510   71 hi q=(0^7)=7 crc=0851 ^ 7387 = 7BD6
#   01 lo q=(6^1)=7 crc=07BD ^ 7387 = 743A   01 hi q=(A^0)=A crc=0743 ^ A50A = A249
#   FF lo q=(9^F)=6 crc=0A24 ^ 6306 = 6922   FF hi q=(2^F)=D crc=0692 ^ D68D = D01F
# CRC = 0xD01F -> on the wire low byte first: 1F D0, exactly the Arduino frame's last two bytes.
ARDUINO_71 = bytes.fromhex("01 71 01 FF  1F D0")

# LP 0x80, single-level broadcast to every machine (address 00), group 1, level 1, $1,234.56:
#   00          address: broadcast (SasConstants.BroadcastAddress; nCompass: no response for address 0)
#   80          command: single-level progressive broadcast
#   01          group 1 (binary)
#   01          level 1 (binary, 01-20)
#   00 00 12 34 56   amount 123456 cents as 10 BCD digits "0000123456", most significant pair first
#   40 86       CRC 0x8640, low byte first
# Nibble steps over 00 80 01 01 00 00 12 34 56:
#   00 lo q=0 crc=0000  00 hi q=0 crc=0000  80 lo q=0 crc=0000  80 hi q=8 crc=8408
#   01 lo q=(8^1)=9 crc=0840^9489=9CC9      01 hi q=(9^0)=9 crc=09CC^9489=9D45
#   01 lo q=(5^1)=4 crc=09D4^4204=4BD0      01 hi q=(0^0)=0 crc=04BD
#   00 lo q=D crc=004B^D68D=D6C6            00 hi q=6 crc=0D6C^6306=6E6A
#   00 lo q=A crc=06E6^A50A=A3EC            00 hi q=C crc=0A3E^C60C=CC32
#   12 lo q=(2^2)=0 crc=0CC3                12 hi q=(3^1)=2 crc=00CC^2102=21CE
#   34 lo q=(E^4)=A crc=021C^A50A=A716      34 hi q=(6^3)=5 crc=0A71^5285=58F4
#   56 lo q=(4^6)=2 crc=058F^2102=248D      56 hi q=(D^5)=8 crc=0248^8408=8640
# 11 bytes in all, as nCompass LongPoll80Message.h POLL_SIZE says.
LP80_FRAME = bytes.fromhex("00 80 01 01  00 00 12 34 56  40 86")

# LP 0x86, multi-level broadcast to every machine, group 2, level 1 = $5,000.00, level 2 = $25.00:
#   00 86       broadcast address, command
#   0D          length = group(1) + 2 levels x (level 1 + amount 5) = 13 = 0x0D
#   02          group 2
#   01 00 00 50 00 00   level 1, 500000 cents = "0000500000"
#   02 00 00 00 25 00   level 2, 2500 cents   = "0000002500"
#   8D 27       CRC 0x278D (same nibble procedure over the 16 bytes before it), low byte first
# 18 bytes = nCompass MIN_POLL_SIZE 6 + 2 x 6.
LP86_FRAME = bytes.fromhex("00 86 0D 02  01 00 00 50 00 00  02 00 00 00 25 00  8D 27")

# LP 0x1C request to machine 1: 01 1C, a type R poll (address, command, no CRC; nCompass
# LongPoll1CMessage sends 2 bytes). The answer, 36 bytes: 01 1C, eight 4-byte BCD meters, CRC.
#   12 34 56 78  coin in 12,345,678 credits      00 12 34 56  coin out 123,456
#   00 09 87 65  drop 98,765                      00 00 50 00  jackpot 5,000
#   00 00 12 34  games played 1,234               00 00 04 56  games won 456
#   00 00 00 07  slot door opened 7               00 00 00 03  power resets 3
#   82 8A        CRC 0x8A82 over the 34 bytes before it, low byte first
LP1C_RESPONSE = bytes.fromhex(
    "01 1C  12 34 56 78  00 12 34 56  00 09 87 65  00 00 50 00"
    "       00 00 12 34  00 00 04 56  00 00 00 07  00 00 00 03  82 8A"
)

# LP 0x0F answer from machine 1, 28 bytes: 01 0F, six 4-byte BCD meters, CRC.
#   00 00 02 50 cancelled credits 250   12 34 56 78 coin in   00 12 34 56 coin out
#   00 09 87 65 drop   00 00 50 00 jackpot   00 00 12 34 games played   CD E1 = CRC 0xE1CD
LP0F_RESPONSE = bytes.fromhex(
    "01 0F  00 00 02 50  12 34 56 78  00 12 34 56  00 09 87 65  00 00 50 00  00 00 12 34  CD E1"
)


def spec_crc(data: bytes) -> int:
    """The nibble-at-a-time SAS routine quoted in the docstring, written out independently of the module."""
    crc = 0
    for c in data:
        q = (crc ^ c) & 0xF
        crc = (crc >> 4) ^ (q * 0x1081)
        q = (crc ^ (c >> 4)) & 0xF
        crc = (crc >> 4) ^ (q * 0x1081)
    return crc


def flips(message: bytes):
    for i in range(len(message)):
        for bit in range(8):
            corrupted = bytearray(message)
            corrupted[i] ^= 1 << bit
            yield bytes(corrupted)


# --- CRC ------------------------------------------------------------------------------------------------


def test_crc_check_value():
    assert sas.crc16_kermit(CHECK_INPUT) == CHECK_VALUE
    assert spec_crc(CHECK_INPUT) == CHECK_VALUE


def test_crc_of_the_arduino_frame_matches_what_it_sends():
    assert sas.crc16_kermit(ARDUINO_71[:-2]) == 0xD01F
    assert sas.frame(0x01, 0x71, b"\x01\xff") == ARDUINO_71
    assert sas.check_crc(ARDUINO_71)


def test_crc_can_be_continued():
    assert sas.crc16_kermit(b"6789", sas.crc16_kermit(b"12345")) == CHECK_VALUE


@given(st.binary(max_size=64))
def test_crc_equals_the_nibble_routine(data):
    assert sas.crc16_kermit(data) == spec_crc(data)


@pytest.mark.parametrize("message", [ARDUINO_71, LP80_FRAME, LP86_FRAME, LP1C_RESPONSE, LP0F_RESPONSE])
def test_every_single_bit_flip_is_caught(message):
    assert sas.check_crc(message)
    for corrupted in flips(message):
        assert not sas.check_crc(corrupted)


@given(
    st.integers(0, 0x7F),
    st.integers(0, 0xFF),
    st.binary(max_size=24),
    st.integers(min_value=0),
    st.integers(0, 7),
)
def test_random_frames_catch_any_single_bit_flip(address, command, payload, where, bit):
    message = bytearray(sas.frame(address, command, payload))
    assert sas.check_crc(message)
    message[where % len(message)] ^= 1 << bit
    assert not sas.check_crc(message)


def test_check_crc_on_too_short_input():
    assert not sas.check_crc(b"")
    assert not sas.check_crc(b"\x00\x00")


# --- BCD ------------------------------------------------------------------------------------------------


def test_bcd_by_hand():
    assert sas.bcd_encode(123456, 5) == bytes([0x00, 0x00, 0x12, 0x34, 0x56])
    assert sas.bcd_encode(0, 4) == b"\x00\x00\x00\x00"
    assert sas.bcd_encode(99_999_999, 4) == b"\x99\x99\x99\x99"
    assert sas.bcd_decode(b"\x00\x00\x12\x34\x56") == 123456


@pytest.mark.parametrize(("value", "nbytes"), [(-1, 4), (100_000_000, 4), (10**10, 5), (1, 0), (True, 4)])
def test_bcd_encode_range(value, nbytes):
    with pytest.raises(SasError):
        sas.bcd_encode(value, nbytes)


@pytest.mark.parametrize("data", [b"\x1a", b"\xa0", b"\x12\x3f", b""])
def test_bcd_decode_rejects_non_decimal_nibbles(data):
    with pytest.raises(SasError):
        sas.bcd_decode(data)


@given(st.integers(1, 8).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, 10 ** (2 * n) - 1))))
def test_bcd_round_trip(args):
    nbytes, value = args
    encoded = sas.bcd_encode(value, nbytes)
    assert len(encoded) == nbytes
    assert sas.bcd_decode(encoded) == value


# --- 0x80 -----------------------------------------------------------------------------------------------


def test_single_level_broadcast_by_hand():
    assert sas.encode_single_level_broadcast(group=1, level=1, amount_cents=123456) == LP80_FRAME
    assert len(LP80_FRAME) == 11
    assert sas.decode_single_level_broadcast(LP80_FRAME) == sas.SingleLevelBroadcast(
        address=0, group=1, level=1, amount_cents=123456
    )


@given(
    address=st.integers(0, 0x7F),
    group=st.integers(1, 0xFF),
    level=st.integers(1, 32),
    amount=st.integers(0, 9_999_999_999),
)
def test_single_level_broadcast_round_trip(address, group, level, amount):
    message = sas.encode_single_level_broadcast(group, level, amount, address=address)
    assert sas.decode_single_level_broadcast(message) == sas.SingleLevelBroadcast(
        address, group, level, amount
    )


@pytest.mark.parametrize(
    ("group", "level", "amount", "address"),
    [
        (0, 1, 0, 0),  # group 0 is for non-SAS progressives
        (256, 1, 0, 0),
        (1, 0, 0, 0),
        (1, 33, 0, 0),
        (1, 1, -1, 0),
        (1, 1, 10**10, 0),  # 11 digits do not fit 5 BCD bytes
        (1, 1, 0, 0x80),
        (1, 1, 1.5, 0),
        (True, 1, 0, 0),
    ],
)
def test_single_level_broadcast_rejects_bad_fields(group, level, amount, address):
    with pytest.raises(SasError):
        sas.encode_single_level_broadcast(group, level, amount, address=address)


def test_single_level_broadcast_decode_errors():
    with pytest.raises(SasError, match="CRC"):
        sas.decode_single_level_broadcast(LP80_FRAME[:-1] + b"\x00")
    with pytest.raises(SasError, match="CRC"):
        sas.decode_single_level_broadcast(LP80_FRAME[:-3] + LP80_FRAME[-2:])  # a byte dropped
    with pytest.raises(SasError, match="11 bytes"):
        sas.decode_single_level_broadcast(sas.frame(0, 0x80, bytes.fromhex("01010000123456FF")))
    with pytest.raises(SasError, match="not BCD"):
        sas.decode_single_level_broadcast(sas.frame(0, 0x80, bytes.fromhex("01010000123A56")))
    with pytest.raises(SasError, match="level"):
        sas.decode_single_level_broadcast(sas.frame(0, 0x80, bytes.fromhex("01210000123456")))
    with pytest.raises(SasError, match="expected long poll 0x80"):
        sas.decode_single_level_broadcast(LP86_FRAME)
    with pytest.raises(SasError, match="too short"):
        sas.decode_single_level_broadcast(b"\x00\x80\x00")
    for corrupted in flips(LP80_FRAME):
        with pytest.raises(SasError):
            sas.decode_single_level_broadcast(corrupted)


# --- 0x86 -----------------------------------------------------------------------------------------------


def test_multi_level_broadcast_by_hand():
    message = sas.encode_multi_level_broadcast(group=2, levels=[(1, 500_000), (2, 2_500)])
    assert message == LP86_FRAME
    assert sas.decode_multi_level_broadcast(LP86_FRAME) == sas.MultiLevelBroadcast(
        address=0, group=2, levels=((1, 500_000), (2, 2_500))
    )


def test_multi_level_broadcast_with_32_levels_has_length_c1():
    message = sas.encode_multi_level_broadcast(9, [(level, level * 100) for level in range(1, 33)])
    assert message[2] == 0xC1  # the parser's documented maximum: 1 + 32 x 6 = 193
    assert len(message) == 6 + 32 * 6
    assert sas.decode_multi_level_broadcast(message).levels[-1] == (32, 3200)


@given(
    address=st.integers(0, 0x7F),
    group=st.integers(1, 0xFF),
    levels=st.lists(st.integers(1, 32), min_size=1, max_size=32, unique=True).flatmap(
        lambda ids: st.tuples(*(st.tuples(st.just(i), st.integers(0, 9_999_999_999)) for i in ids))
    ),
)
def test_multi_level_broadcast_round_trip(address, group, levels):
    message = sas.encode_multi_level_broadcast(group, levels, address=address)
    assert message[2] == 1 + 6 * len(levels)
    assert len(message) == 6 + 6 * len(levels)
    assert sas.decode_multi_level_broadcast(message) == sas.MultiLevelBroadcast(address, group, tuple(levels))


@pytest.mark.parametrize(
    ("group", "levels"),
    [
        (1, []),
        (1, [(level, 0) for level in range(1, 33)] + [(1, 0)]),  # 33 pairs
        (1, [(1, 0), (1, 5)]),  # the same level twice
        (0, [(1, 0)]),
        (1, [(33, 0)]),
        (1, [(1, 10**10)]),
    ],
)
def test_multi_level_broadcast_rejects_bad_fields(group, levels):
    with pytest.raises(SasError):
        sas.encode_multi_level_broadcast(group, levels)


def test_multi_level_broadcast_decode_errors():
    body = LP86_FRAME[3:-2]  # group and the two level records
    with pytest.raises(SasError, match="length byte says"):
        sas.decode_multi_level_broadcast(sas.frame(0, 0x86, bytes([0x07]) + body))
    with pytest.raises(SasError, match="not 1 \\+ 6"):
        sas.decode_multi_level_broadcast(sas.frame(0, 0x86, bytes([len(body) - 1]) + body[:-1]))
    with pytest.raises(SasError, match="not 1 \\+ 6"):
        sas.decode_multi_level_broadcast(sas.frame(0, 0x86, b"\x01\x02"))  # a group, no level
    with pytest.raises(SasError, match="length byte"):
        sas.decode_multi_level_broadcast(sas.frame(0, 0x86))
    with pytest.raises(SasError, match="not BCD"):
        sas.decode_multi_level_broadcast(sas.frame(0, 0x86, bytes.fromhex("070201000050000F")))
    with pytest.raises(SasError, match="group"):
        sas.decode_multi_level_broadcast(sas.frame(0, 0x86, bytes.fromhex("07 00 01 00 00 50 00 00")))
    for corrupted in flips(LP86_FRAME):
        with pytest.raises(SasError):
            sas.decode_multi_level_broadcast(corrupted)


def test_ack_and_nack():
    # nCompass: the answer to an addressed 0x80/0x86 is the machine's own address (ACK);
    # Aristocrat SasConstants.Nack: address | 0x80 is a NACK.
    assert sas.decode_long_poll_ack(b"\x05", 5) is True
    assert sas.decode_long_poll_ack(b"\x85", 5) is False
    with pytest.raises(SasError):
        sas.decode_long_poll_ack(b"\x06", 5)
    with pytest.raises(SasError):
        sas.decode_long_poll_ack(b"\x05\x05", 5)
    with pytest.raises(SasError):
        sas.decode_long_poll_ack(b"\x00", 0)  # broadcasts get no answer at all


# --- 0x01 / 0x02 ----------------------------------------------------------------------------------------

# LP 0x01 (shutdown: lock out play) and 0x02 (startup: enable play) to machine 1, type S: address, command,
# CRC (Aristocrat LP01ShutdownParser.cs @ d153cca961428a7fce08d3d4c42735bb5d47b064 and LP02StartupParser.cs
# @ c5b1311973f4c8602d69000ae886151e3ecf531f: "Address 01-7F, Command 01/02, CRC 0000-FFFF"), 4 bytes.
# Nibble steps, both from crc = 1189 after the address byte 01 (as in ARDUINO_71 above):
#   01 lo q=(9^1)=8 crc=0118^8408=8510      01 hi q=(0^0)=0 crc=0851           -> CRC 0x0851: 51 08
#   02 lo q=(9^2)=B crc=0118^B58B=B493      02 hi q=(3^0)=3 crc=0B49^3183=3ACA -> CRC 0x3ACA: CA 3A
# (B * 0x1081 = B | B << 7 | B << 12 = 000B ^ 0580 ^ B000 = B58B; 3 * 0x1081 = 0003 ^ 0180 ^ 3000 = 3183.)
LP01_FRAME = bytes.fromhex("01 01  51 08")
LP02_FRAME = bytes.fromhex("01 02  CA 3A")


def test_shutdown_and_startup_by_hand():
    assert spec_crc(LP01_FRAME[:2]) == 0x0851 and spec_crc(LP02_FRAME[:2]) == 0x3ACA
    assert sas.encode_play_control(1, enable=False) == LP01_FRAME
    assert sas.encode_play_control(1, enable=True) == LP02_FRAME
    assert sas.decode_play_control(LP01_FRAME) == (1, False)
    assert sas.decode_play_control(LP02_FRAME) == (1, True)
    # The host's message is 4 bytes; the machine's answer is its address (ACK) or address | 0x80 (NACK).
    assert sas.host_message_length(LP01_FRAME[:2]) == sas.host_message_length(LP02_FRAME[:2]) == 4
    assert sas.response_length(sas.LP_SHUTDOWN, b"\x01") == 1
    assert sas.response_length(sas.LP_STARTUP, b"\x81") == 1
    assert sas.decode_long_poll_ack(b"\x01", 1) is True


def test_shutdown_and_startup_errors():
    for address in (0, 0x80, True):  # the broadcast address gets no answer: never an addressed lock-out
        with pytest.raises(SasError):
            sas.encode_play_control(address, enable=False)
    with pytest.raises(SasError, match="CRC"):
        sas.decode_play_control(LP01_FRAME[:-1] + b"\x00")
    with pytest.raises(SasError, match="not a shutdown"):
        sas.decode_play_control(sas.frame(1, 0x03))
    with pytest.raises(SasError, match="4 bytes"):
        sas.decode_play_control(sas.frame(1, 0x01, b"\x00"))
    with pytest.raises(SasError):
        sas.decode_play_control(sas.frame(0, 0x01))
    for corrupted in [*flips(LP01_FRAME), *flips(LP02_FRAME)]:
        with pytest.raises(SasError):
            sas.decode_play_control(corrupted)


# --- meters ---------------------------------------------------------------------------------------------


def test_meter_requests_are_two_bytes_without_crc():
    assert sas.encode_meters_request(1) == b"\x01\x1c"
    assert sas.encode_meters_request(1, sas.LP_SEND_METERS_10_15) == b"\x01\x0f"
    with pytest.raises(SasError):
        sas.encode_meters_request(0)  # nothing answers the broadcast address
    with pytest.raises(SasError):
        sas.encode_meters_request(1, 0x11)


def test_send_meters_response_by_hand():
    assert len(LP1C_RESPONSE) == 36
    meters = sas.decode_send_meters_response(LP1C_RESPONSE, accounting_denom_cents=1)
    assert meters == sas.GamingMachineMeters(
        address=1,
        coin_in_cents=12_345_678,
        coin_out_cents=123_456,
        drop_cents=98_765,
        jackpot_cents=5_000,
        games_played=1_234,
        games_won=456,
        slot_door_opened=7,
        power_resets=3,
    )
    assert sas.encode_send_meters_response(meters, accounting_denom_cents=1) == LP1C_RESPONSE


def test_meters_scale_by_the_accounting_denomination():
    # Money meters count credits (Aristocrat maps them MeterCategory.Credit); a 5-cent machine's
    # 12,345,678 credits are 61,728,390 cents. Counts are not scaled.
    meters = sas.decode_send_meters_response(LP1C_RESPONSE, accounting_denom_cents=5)
    assert meters.coin_in_cents == 61_728_390
    assert meters.jackpot_cents == 25_000
    assert meters.games_played == 1_234
    assert sas.encode_send_meters_response(meters, accounting_denom_cents=5) == LP1C_RESPONSE


def test_meters_10_15_response_by_hand():
    assert len(LP0F_RESPONSE) == 28
    meters = sas.decode_meters_10_15_response(LP0F_RESPONSE, accounting_denom_cents=1)
    assert meters == sas.Meters10To15(
        address=1,
        cancelled_credits_cents=250,
        coin_in_cents=12_345_678,
        coin_out_cents=123_456,
        drop_cents=98_765,
        jackpot_cents=5_000,
        games_played=1_234,
    )
    assert sas.encode_meters_10_15_response(meters, accounting_denom_cents=1) == LP0F_RESPONSE


meter = st.integers(0, 99_999_999)
denominations = st.sampled_from([1, 2, 5, 10, 25, 50, 100, 500])


@given(st.integers(1, 0x7F), denominations, st.lists(meter, min_size=8, max_size=8))
def test_send_meters_round_trip(address, denom, values):
    money = [v * denom for v in values[:4]]
    meters = sas.GamingMachineMeters(address, *money, *values[4:])
    message = sas.encode_send_meters_response(meters, accounting_denom_cents=denom)
    assert len(message) == 36
    assert sas.decode_send_meters_response(message, accounting_denom_cents=denom) == meters


@given(st.integers(1, 0x7F), denominations, st.lists(meter, min_size=6, max_size=6))
def test_meters_10_15_round_trip(address, denom, values):
    cancelled, coin_in, coin_out, drop, jackpot = (v * denom for v in values[:5])
    meters = sas.Meters10To15(address, cancelled, coin_in, coin_out, drop, jackpot, values[5])
    message = sas.encode_meters_10_15_response(meters, accounting_denom_cents=denom)
    assert len(message) == 28
    assert sas.decode_meters_10_15_response(message, accounting_denom_cents=denom) == meters


def test_meter_errors():
    with pytest.raises(SasError, match="36 bytes"):
        sas.decode_send_meters_response(sas.frame(1, 0x1C, LP1C_RESPONSE[2:-6]), accounting_denom_cents=1)
    with pytest.raises(SasError, match="expected long poll 0x1c"):
        sas.decode_send_meters_response(LP0F_RESPONSE, accounting_denom_cents=1)
    bad = bytearray(LP1C_RESPONSE[2:-2])
    bad[0] = 0xAB  # coin in starts with nibbles A, B
    with pytest.raises(SasError, match="not BCD"):
        sas.decode_send_meters_response(sas.frame(1, 0x1C, bytes(bad)), accounting_denom_cents=1)
    with pytest.raises(SasError, match="accounting_denom_cents"):
        sas.decode_send_meters_response(LP1C_RESPONSE, accounting_denom_cents=0)
    meters = sas.decode_send_meters_response(LP1C_RESPONSE, accounting_denom_cents=1)
    with pytest.raises(SasError, match="whole number"):
        sas.encode_send_meters_response(meters, accounting_denom_cents=5)  # 12,345,678 cents / 5
    too_big = sas.Meters10To15(1, 0, 0, 0, 0, 0, 100_000_000)
    with pytest.raises(SasError):
        sas.encode_meters_10_15_response(too_big, accounting_denom_cents=1)
    for corrupted in flips(LP1C_RESPONSE):
        with pytest.raises(SasError):
            sas.decode_send_meters_response(corrupted, accounting_denom_cents=1)


# --- general poll exceptions ----------------------------------------------------------------------------


def test_general_poll_is_address_with_bit_7():
    assert sas.encode_general_poll(1) == b"\x81"
    assert sas.encode_general_poll(0x7F) == b"\xff"
    with pytest.raises(SasError):
        sas.encode_general_poll(0)
    with pytest.raises(SasError):
        sas.encode_general_poll(0x80)


@pytest.mark.parametrize(
    ("code", "event"),
    [
        (0x00, sas.PollEvent.NONE),
        (0x51, sas.PollEvent.HANDPAY_PENDING),  # Handpay is pending (progressive, non-progressive, ...)
        (0x52, sas.PollEvent.HANDPAY_RESET),
        (0x53, sas.PollEvent.LINK_LOST),  # No progressive information has been received for 5 seconds
        (0x54, sas.PollEvent.PROGRESSIVE_WIN),  # Progressive win (cashout device/credit paid)
        (0x55, sas.PollEvent.OTHER),  # Player has cancelled the handpay request
        (0x56, sas.PollEvent.LEVEL_HIT),  # SAS progressive level hit
        (0x11, sas.PollEvent.DOOR_OPEN),  # slot door was opened (issue 31 reads it)
    ],
)
def test_general_poll_exceptions(code, event):
    result = sas.decode_general_poll_response(bytes([code]))
    assert result.code == code
    assert result.event is event


def test_general_poll_exception_descriptions():
    assert "5 seconds" in sas.decode_general_poll_response(b"\x53").description
    assert sas.decode_general_poll_response(b"\x54").description.startswith("Progressive win")


@pytest.mark.parametrize("response", [b"", b"\x54\x00"])
def test_general_poll_response_is_one_byte(response):
    with pytest.raises(SasError):
        sas.decode_general_poll_response(response)


def test_frame_rejects_bad_address_and_command():
    with pytest.raises(SasError):
        sas.frame(0x80, 0x80)
    with pytest.raises(SasError):
        sas.frame(0, 0x100)
    body = bytes([0x81]) + LP80_FRAME[1:-2]  # a general-poll byte where the address should be
    crc = sas.crc16_kermit(body)
    with pytest.raises(SasError, match="bit 7"):
        sas.decode_single_level_broadcast(body + bytes([crc & 0xFF, crc >> 8]))
