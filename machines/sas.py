"""SAS messages a linked progressive controller needs: pure encode/decode, no I/O, no Django.

SAS (Slot Accounting System, IGT) is the serial protocol between a gaming machine (EGM) and a host.
This module builds and parses the byte frames only; the serial port (19200 baud, wake-up/9th bit on
the first byte the host sends) belongs to whoever drives the line.

Frames covered
--------------
(Issue 31 added, for the SAS host bridge, machines.sasbridge: real-time event reporting (LP 0x0E and the
``address FF code data`` answers, game start/end with their data), selected meters (LP 0x2F), the
progressive win (LP 0x84/0x85), hand-pay information (LP 0x1B), the remote hand-pay reset (LP 0x94), the
door, power, tilt and game exceptions, and `host_message_length`/`response_length`, which tell a reader of
the line how long a message is from its first bytes. Their layouts are described beside their functions.)

* Long poll 0x80, single-level progressive broadcast (host -> EGM, type S, with CRC)::

      address(1) 0x80 group(1, 01-FF) level(1, 01-20) amount(5 BCD, cents) CRC(2)   = 11 bytes

* Long poll 0x86, multiple-level progressive broadcast (host -> EGM, type S, with CRC)::

      address(1) 0x86 length(1, 07-C1) group(1) {level(1) amount(5 BCD)} x 1..32 CRC(2)

  ``length`` counts the bytes after itself up to (not including) the CRC: 1 + 6 x levels.
  Address 0 is the broadcast address: EGMs do not answer it. A non-zero address is answered with the
  address byte (ACK) or the address with bit 7 set (NACK).
* Long polls 0x1C (send meters) and 0x0F (send meters 10-15), host -> EGM, type R: just
  ``address command``, no CRC. The EGM answers ``address command meters(4 BCD each) CRC(2)``:
  0x1C = coin in, coin out, drop, jackpot, games played, games won, slot door opened, power resets
  (36 bytes); 0x0F = cancelled credits, coin in, coin out, drop, jackpot, games played (28 bytes).
  Money meters are in credits of the machine's accounting denomination; the decoders take that
  denomination and return cents.
* General poll: the host sends one byte, ``0x80 | address``; the EGM answers one byte, the oldest
  pending exception code (0x00 = none). The progressive ones: 0x51 handpay pending (progressive,
  non-progressive or cancelled credits), 0x52 handpay reset, 0x53 no progressive information has been
  received for 5 seconds (the link is lost), 0x54 progressive win (cashout device / credit paid),
  0x56 SAS progressive level hit.

CRC: CRC-16/KERMIT (poly 0x1021 reflected = 0x8408, init 0, no final xor), over every byte from the
address to the last data byte, sent least significant byte first. Check value: "123456789" -> 0x2189.
The SAS stacks checked compute it a nibble at a time with the octal constant 010201 (= 0x1081; Aristocrat's
GenerateCrc says "per section 5 of the SAS spec"); that gives the same value as the bitwise form below.

Sources checked (public GitHub; read, not copied)
-------------------------------------------------
* tejvirc/Platform (Aristocrat Monaco EGM platform, SAS client):
  - Protocol/SAS/Aristocrat.Sas.Client/LPParsers/LP80SingleLevelProgressiveBroadcastParser.cs
    @ c5b1311973f4c8602d69000ae886151e3ecf531f  (0x80 layout, group 01-FF, level 01-20, 5 BCD cents)
  - Protocol/SAS/Aristocrat.Sas.Client/LPParsers/LP86MultipleLevelProgressiveBroadcastParser.cs
    @ c5b1311973f4c8602d69000ae886151e3ecf531f  (0x86 layout, length 07-C1, 6 bytes a level)
  - Protocol/SAS/Aristocrat.Sas.Client/LPParsers/LP1CSendMetersParser.cs
    @ d153cca961428a7fce08d3d4c42735bb5d47b064  (0x1C response: eight 4-byte BCD meters)
  - Protocol/SAS/Aristocrat.Sas.Client/LPParsers/LP0FSendMeters10Through15Parser.cs
    @ c5b1311973f4c8602d69000ae886151e3ecf531f  (0x0F response: six 4-byte BCD meters)
  - Protocol/SAS/Aristocrat.Sas.Client/GeneralExceptionCode.cs
    @ 975fe8fdc5f74ac6f4725fbf3c535ac9412817cf  (exception codes 0x51-0x57, "Appendix A Table A-1")
  - Protocol/SAS/Aristocrat.Sas.Client/Utilities.cs
    @ 26c9860b278c495874ed2f2fabc58d343b6d3bd8  (GenerateCrc nibble routine 0x1081, CRC low byte
    first, BCD most significant digit first)
  - Protocol/SAS/Aristocrat.Sas.Client/SasConstants.cs
    @ 975fe8fdc5f74ac6f4725fbf3c535ac9412817cf  (broadcast address 0, NACK = address | 0x80)
  - classes Aristocrat.Monaco.Sas.SasMeterNumberToMeterConfiguration (coin in/out, drop, jackpot,
    cancelled credits are MeterCategory.Credit) and Aristocrat.Monaco.Sas.Progressive.ProgressiveConstants
    (LevelTimeout = 5000 ms "before exception 53 should be issued"); the index did not give their paths.
* lakeshsharma/nCompass (host-side SAS stack) @ 5453debb29f7409772a2f0ef9f9127ebbcdc6dba:
  Sentinel/SASProtocol/LongPoll80Message.{h,cpp}, LongPoll86Message.{h,cpp} (11-byte 0x80 poll;
  0x86 = 6 + 6 x levels bytes, length = size - 5, at most 32 levels; address 0 gets no response, else
  ACK = own address), SASLimits.h (group 1-255, level 1-32), LongPoll1CMessage.cpp (2-byte request,
  36-byte response), SASGeneralPoll.cpp (general poll = address | 0x80, 1-byte reply).
* SeaweedZheng/u3d-psson152-dll-line @ 963661a72881d29d4b851be8fe9587402cef767e,
  Assets/HotFix/_Common/Machine/Sas/SAS/SasConstant.cs: the exception table's wording (0x51-0x56, with
  the spec's section numbers 7-13, 10-2, 10-3), used for the descriptions below.
* marcrdavis/ArduinoTITO-PlayerTracking @ 0eaefaa7956342b9ae2b3b4f33ddb3b331901441,
  ArduinoTITODeluxeR4WiFi/src/ArduinoTITODeluxeR4Wifi/ArduinoTITODeluxeR4Wifi.ino: a frame with its
  CRC as sent to real machines, ``01 71 01 FF 1F D0`` (CRC 0xD01F, low byte first), and 2-byte meter
  requests (``address 0x11`` etc.); used as an independent CRC test vector.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Final

__all__ = [
    "AMOUNT_BCD_BYTES",
    "BROADCAST_ADDRESS",
    "CRC_BYTES",
    "EXCEPTION_AC_POWER_APPLIED",
    "EXCEPTION_AC_POWER_LOST",
    "EXCEPTION_GAME_ENDED",
    "EXCEPTION_GAME_STARTED",
    "EXCEPTION_GENERAL_TILT",
    "EXCEPTION_HANDPAY_PENDING",
    "EXCEPTION_HANDPAY_RESET",
    "EXCEPTION_NO_ACTIVITY",
    "EXCEPTION_NO_PROGRESSIVE_INFO",
    "EXCEPTION_PROGRESSIVE_WIN",
    "EXCEPTION_SAS_PROGRESSIVE_LEVEL_HIT",
    "EXCEPTION_SLOT_DOOR_CLOSED",
    "EXCEPTION_SLOT_DOOR_OPENED",
    "GENERAL_POLL_BIT",
    "HANDPAY_LEVEL_CANCELLED_CREDITS",
    "HANDPAY_LEVEL_NON_PROGRESSIVE",
    "HANDPAY_LEVEL_NON_SAS_PROGRESSIVE",
    "HANDPAY_RESET_DONE",
    "HANDPAY_RESET_NOT_IN_HANDPAY",
    "HANDPAY_RESET_UNABLE",
    "LP_ENABLE_REAL_TIME_EVENTS",
    "LP_MULTI_LEVEL_BROADCAST",
    "LP_REMOTE_HANDPAY_RESET",
    "LP_SEND_HANDPAY_INFO",
    "LP_SEND_METERS",
    "LP_SEND_METERS_10_15",
    "LP_SEND_PROGRESSIVE_WIN",
    "LP_SEND_SAS_PROGRESSIVE_WIN",
    "LP_SEND_SELECTED_METERS",
    "LP_SHUTDOWN",
    "LP_SINGLE_LEVEL_BROADCAST",
    "LP_STARTUP",
    "MAX_ADDRESS",
    "MAX_AMOUNT_CENTS",
    "MAX_GROUP",
    "MAX_LEVEL",
    "MAX_LEVELS_PER_BROADCAST",
    "MAX_METER",
    "METER_BCD_BYTES",
    "METER_CURRENT_CREDITS",
    "METER_GAMES_PLAYED",
    "METER_GAMES_WON",
    "METER_TOTAL_CANCELLED",
    "METER_TOTAL_COIN_IN",
    "METER_TOTAL_COIN_OUT",
    "METER_TOTAL_HANDPAID_CANCELLED",
    "METER_TOTAL_JACKPOT",
    "MIN_GROUP",
    "MIN_LEVEL",
    "NACK_BIT",
    "REAL_TIME_MARKER",
    "RTE_DATA_LENGTHS",
    "SELECTED_METER_SIZES",
    "TYPE_R_POLLS",
    "GamingMachineMeters",
    "GeneralPollException",
    "HandpayInfo",
    "Meters10To15",
    "MultiLevelBroadcast",
    "PollEvent",
    "ProgressiveWin",
    "RealTimeEvent",
    "SasError",
    "SingleLevelBroadcast",
    "bcd_decode",
    "bcd_encode",
    "check_crc",
    "classify_exception",
    "crc16_kermit",
    "decode_enable_real_time_events",
    "decode_general_poll_response",
    "decode_handpay_info_response",
    "decode_long_poll_ack",
    "decode_meters_10_15_response",
    "decode_multi_level_broadcast",
    "decode_play_control",
    "decode_progressive_win_response",
    "decode_real_time_event",
    "decode_remote_handpay_reset_response",
    "decode_selected_meters_request",
    "decode_selected_meters_response",
    "decode_send_meters_response",
    "decode_single_level_broadcast",
    "encode_enable_real_time_events",
    "encode_general_poll",
    "encode_handpay_info_response",
    "encode_meters_10_15_response",
    "encode_meters_request",
    "encode_multi_level_broadcast",
    "encode_play_control",
    "encode_progressive_win_response",
    "encode_real_time_event",
    "encode_remote_handpay_reset",
    "encode_remote_handpay_reset_response",
    "encode_selected_meters_request",
    "encode_selected_meters_response",
    "encode_send_meters_response",
    "encode_single_level_broadcast",
    "frame",
    "host_message_length",
    "response_length",
]

BROADCAST_ADDRESS: Final = 0x00  # SasConstants.BroadcastAddress (type G long polls)
MAX_ADDRESS: Final = 0x7F
NACK_BIT: Final = 0x80  # SasConstants.Nack: "Or this with the SAS address to Nack a long poll"
GENERAL_POLL_BIT: Final = 0x80  # SASGeneralPoll.cpp: m_gameAddress | 0x80

LP_SEND_METERS_10_15: Final = 0x0F
LP_SEND_METERS: Final = 0x1C
LP_SINGLE_LEVEL_BROADCAST: Final = 0x80
LP_MULTI_LEVEL_BROADCAST: Final = 0x86

MIN_GROUP: Final = 1  # SASLimits.h: 0 is reserved for non-SAS progressives
MAX_GROUP: Final = 0xFF
MIN_LEVEL: Final = 1
MAX_LEVEL: Final = 32  # LP80/LP86 parsers: level 01-20 hex
MAX_LEVELS_PER_BROADCAST: Final = 32  # LongPoll86Message.h MAX_LEVEL_COUNT; length byte up to 0xC1
AMOUNT_BCD_BYTES: Final = 5  # 10 digits of cents
MAX_AMOUNT_CENTS: Final = 10 ** (2 * AMOUNT_BCD_BYTES) - 1
METER_BCD_BYTES: Final = 4  # 8 digits
MAX_METER: Final = 10 ** (2 * METER_BCD_BYTES) - 1
CRC_BYTES: Final = 2
_LEVEL_RECORD_BYTES: Final = 1 + AMOUNT_BCD_BYTES

EXCEPTION_NO_ACTIVITY: Final = 0x00
EXCEPTION_HANDPAY_PENDING: Final = 0x51
EXCEPTION_HANDPAY_RESET: Final = 0x52
EXCEPTION_NO_PROGRESSIVE_INFO: Final = 0x53
EXCEPTION_PROGRESSIVE_WIN: Final = 0x54
EXCEPTION_SAS_PROGRESSIVE_LEVEL_HIT: Final = 0x56
EXCEPTION_SLOT_DOOR_OPENED: Final = 0x11
EXCEPTION_SLOT_DOOR_CLOSED: Final = 0x12
EXCEPTION_AC_POWER_APPLIED: Final = 0x17
EXCEPTION_AC_POWER_LOST: Final = 0x18
EXCEPTION_GENERAL_TILT: Final = 0x20
EXCEPTION_GAME_STARTED: Final = 0x7E
EXCEPTION_GAME_ENDED: Final = 0x7F


class SasError(ValueError):
    """A SAS frame that cannot be built or parsed: out-of-range field, bad CRC, wrong length, bad BCD."""


# --- CRC -----------------------------------------------------------------------------------------------


def crc16_kermit(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """CRC-16/KERMIT of ``data`` (reflected poly 0x8408, init 0, no final xor); pass ``crc`` to continue."""
    for byte in bytes(data):
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x8408 if crc & 1 else crc >> 1
    return crc


def frame(address: int, command: int, payload: bytes | bytearray = b"") -> bytes:
    """``address command payload`` followed by its CRC, low byte first."""
    _check_range("address", address, BROADCAST_ADDRESS, MAX_ADDRESS)
    _check_range("command", command, 0x00, 0xFF)
    body = bytes([address, command]) + bytes(payload)
    crc = crc16_kermit(body)
    return body + bytes([crc & 0xFF, crc >> 8])


def check_crc(message: bytes | bytearray) -> bool:
    """True if the last two bytes of ``message`` are the CRC (low byte first) of the bytes before them."""
    if len(message) < 1 + CRC_BYTES:
        return False
    crc = crc16_kermit(message[:-CRC_BYTES])
    return message[-2] == crc & 0xFF and message[-1] == crc >> 8


# --- BCD -----------------------------------------------------------------------------------------------


def bcd_encode(value: int, nbytes: int) -> bytes:
    """``value`` as ``nbytes`` packed BCD bytes, most significant digit first (``1234, 2 -> 12 34``)."""
    _check_range("nbytes", nbytes, 1, 16)
    _check_range("BCD value", value, 0, 10 ** (2 * nbytes) - 1)
    digits = f"{value:0{2 * nbytes}d}"
    return bytes.fromhex(digits)


def bcd_decode(data: bytes | bytearray) -> int:
    """The number in packed BCD ``data``; SasError if a nibble is above 9."""
    if not data:
        raise SasError("empty BCD field")
    digits = bytes(data).hex()
    if not digits.isdigit():
        raise SasError(f"not BCD: {bytes(data).hex(' ')}")
    return int(digits)


# --- progressive broadcasts (0x80, 0x86) ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SingleLevelBroadcast:
    address: int
    group: int
    level: int
    amount_cents: int


@dataclass(frozen=True, slots=True)
class MultiLevelBroadcast:
    address: int
    group: int
    levels: tuple[tuple[int, int], ...]  # (level, amount_cents), in frame order


def encode_single_level_broadcast(
    group: int, level: int, amount_cents: int, address: int = BROADCAST_ADDRESS
) -> bytes:
    """Long poll 0x80: one level's amount. Address 0 (default) reaches every machine on the loop."""
    _check_range("group", group, MIN_GROUP, MAX_GROUP)
    _check_range("level", level, MIN_LEVEL, MAX_LEVEL)
    payload = bytes([group, level]) + bcd_encode(_amount(amount_cents), AMOUNT_BCD_BYTES)
    return frame(address, LP_SINGLE_LEVEL_BROADCAST, payload)


def decode_single_level_broadcast(message: bytes | bytearray) -> SingleLevelBroadcast:
    address, data = _open(message, LP_SINGLE_LEVEL_BROADCAST)
    _expect_length(message, 2 + 2 + AMOUNT_BCD_BYTES + CRC_BYTES)
    group, level = data[0], data[1]
    _check_range("group", group, MIN_GROUP, MAX_GROUP)
    _check_range("level", level, MIN_LEVEL, MAX_LEVEL)
    return SingleLevelBroadcast(address, group, level, bcd_decode(data[2:]))


def encode_multi_level_broadcast(
    group: int, levels: Sequence[tuple[int, int]], address: int = BROADCAST_ADDRESS
) -> bytes:
    """Long poll 0x86: up to 32 ``(level, amount_cents)`` pairs of one group, in the order given."""
    _check_range("group", group, MIN_GROUP, MAX_GROUP)
    if not 1 <= len(levels) <= MAX_LEVELS_PER_BROADCAST:
        raise SasError(f"0x86 carries 1-{MAX_LEVELS_PER_BROADCAST} levels, not {len(levels)}")
    seen: set[int] = set()
    records = bytearray([group])
    for level, amount_cents in levels:
        _check_range("level", level, MIN_LEVEL, MAX_LEVEL)
        if level in seen:
            raise SasError(f"level {level} appears twice in one broadcast")
        seen.add(level)
        records.append(level)
        records += bcd_encode(_amount(amount_cents), AMOUNT_BCD_BYTES)
    return frame(address, LP_MULTI_LEVEL_BROADCAST, bytes([len(records)]) + records)


def decode_multi_level_broadcast(message: bytes | bytearray) -> MultiLevelBroadcast:
    address, data = _open(message, LP_MULTI_LEVEL_BROADCAST)
    if not data:
        raise SasError("0x86 without a length byte")
    length, records = data[0], data[1:]
    if length != len(records):
        raise SasError(f"0x86 length byte says {length}, frame carries {len(records)} bytes")
    count, rest = divmod(length - 1, _LEVEL_RECORD_BYTES)
    if length < 1 + _LEVEL_RECORD_BYTES or rest or count > MAX_LEVELS_PER_BROADCAST:
        raise SasError(f"0x86 length {length:#04x} is not 1 + 6 x (1-32 levels)")
    group = records[0]
    _check_range("group", group, MIN_GROUP, MAX_GROUP)
    levels = []
    for start in range(1, length, _LEVEL_RECORD_BYTES):
        level = records[start]
        _check_range("level", level, MIN_LEVEL, MAX_LEVEL)
        levels.append((level, bcd_decode(records[start + 1 : start + _LEVEL_RECORD_BYTES])))
    return MultiLevelBroadcast(address, group, tuple(levels))


def decode_long_poll_ack(response: bytes | bytearray, address: int) -> bool:
    """An EGM's answer to an addressed type S poll: True for ACK (its address), False for NACK."""
    _check_range("address", address, 1, MAX_ADDRESS)
    if len(response) != 1:
        raise SasError(f"an ACK/NACK is 1 byte, got {len(response)}")
    if response[0] == address:
        return True
    if response[0] == address | NACK_BIT:
        return False
    raise SasError(f"{response[0]:#04x} is neither ACK nor NACK from address {address:#04x}")


# --- meters (0x1C, 0x0F) -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GamingMachineMeters:
    """Long poll 0x1C response; money meters converted from credits to cents."""

    address: int
    coin_in_cents: int
    coin_out_cents: int
    drop_cents: int
    jackpot_cents: int
    games_played: int
    games_won: int
    slot_door_opened: int
    power_resets: int


@dataclass(frozen=True, slots=True)
class Meters10To15:
    """Long poll 0x0F response; money meters converted from credits to cents."""

    address: int
    cancelled_credits_cents: int
    coin_in_cents: int
    coin_out_cents: int
    drop_cents: int
    jackpot_cents: int
    games_played: int


def encode_meters_request(address: int, command: int = LP_SEND_METERS) -> bytes:
    """A type R meter long poll (0x1C or 0x0F): ``address command``, no CRC."""
    _check_range("address", address, 1, MAX_ADDRESS)
    if command not in (LP_SEND_METERS, LP_SEND_METERS_10_15):
        raise SasError(f"not a meter long poll this module reads: {command:#04x}")
    return bytes([address, command])


def decode_send_meters_response(
    message: bytes | bytearray, *, accounting_denom_cents: int
) -> GamingMachineMeters:
    address, values = _open_meters(message, LP_SEND_METERS, 8)
    coin_in, coin_out, drop, jackpot = (_to_cents(v, accounting_denom_cents) for v in values[:4])
    games_played, games_won, slot_door_opened, power_resets = values[4:]
    return GamingMachineMeters(
        address, coin_in, coin_out, drop, jackpot, games_played, games_won, slot_door_opened, power_resets
    )


def encode_send_meters_response(meters: GamingMachineMeters, *, accounting_denom_cents: int) -> bytes:
    """The EGM side of 0x1C, for simulators and tests."""
    money = (meters.coin_in_cents, meters.coin_out_cents, meters.drop_cents, meters.jackpot_cents)
    counts = (meters.games_played, meters.games_won, meters.slot_door_opened, meters.power_resets)
    credits = [_to_credits(c, accounting_denom_cents) for c in money]
    return _meters_frame(meters.address, LP_SEND_METERS, [*credits, *counts])


def decode_meters_10_15_response(message: bytes | bytearray, *, accounting_denom_cents: int) -> Meters10To15:
    address, values = _open_meters(message, LP_SEND_METERS_10_15, 6)
    cancelled, coin_in, coin_out, drop, jackpot = (_to_cents(v, accounting_denom_cents) for v in values[:5])
    return Meters10To15(address, cancelled, coin_in, coin_out, drop, jackpot, values[5])


def encode_meters_10_15_response(meters: Meters10To15, *, accounting_denom_cents: int) -> bytes:
    """The EGM side of 0x0F, for simulators and tests."""
    money = (
        meters.cancelled_credits_cents,
        meters.coin_in_cents,
        meters.coin_out_cents,
        meters.drop_cents,
        meters.jackpot_cents,
    )
    credits = [_to_credits(c, accounting_denom_cents) for c in money]
    return _meters_frame(meters.address, LP_SEND_METERS_10_15, [*credits, meters.games_played])


# --- general poll exceptions ---------------------------------------------------------------------------


class PollEvent(Enum):
    NONE = "none"
    HANDPAY_PENDING = "handpay_pending"  # may be a progressive over the handpay limit: read LP 0x1B
    HANDPAY_RESET = "handpay_reset"
    LINK_LOST = "link_lost"  # no progressive broadcast for 5 s: the EGM locks its progressive levels
    PROGRESSIVE_WIN = "progressive_win"  # paid to the credit meter / cashout device
    LEVEL_HIT = "level_hit"  # SAS progressive level hit: read the win with LP 0x84/0x85/0x87
    DOOR_OPEN = "door_open"
    DOOR_CLOSED = "door_closed"
    POWER_ON = "power_on"
    POWER_OFF = "power_off"
    TILT = "tilt"
    GAME_STARTED = "game_started"  # real-time: credits wagered, coin-in meter, wager type, group
    GAME_ENDED = "game_ended"  # real-time: the game's win in credits
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class GeneralPollException:
    code: int
    event: PollEvent
    description: str


_EXCEPTIONS: Final[dict[int, tuple[PollEvent, str]]] = {
    EXCEPTION_NO_ACTIVITY: (PollEvent.NONE, "No activity"),
    EXCEPTION_HANDPAY_PENDING: (
        PollEvent.HANDPAY_PENDING,
        "Handpay is pending (progressive, non-progressive or cancelled credits)",
    ),
    EXCEPTION_HANDPAY_RESET: (PollEvent.HANDPAY_RESET, "Handpay was reset"),
    EXCEPTION_NO_PROGRESSIVE_INFO: (
        PollEvent.LINK_LOST,
        "No progressive information has been received for 5 seconds",
    ),
    EXCEPTION_PROGRESSIVE_WIN: (PollEvent.PROGRESSIVE_WIN, "Progressive win (cashout device/credit paid)"),
    EXCEPTION_SAS_PROGRESSIVE_LEVEL_HIT: (PollEvent.LEVEL_HIT, "SAS progressive level hit"),
    EXCEPTION_SLOT_DOOR_OPENED: (PollEvent.DOOR_OPEN, "Slot door was opened"),
    EXCEPTION_SLOT_DOOR_CLOSED: (PollEvent.DOOR_CLOSED, "Slot door was closed"),
    EXCEPTION_AC_POWER_APPLIED: (PollEvent.POWER_ON, "AC power was applied to gaming machine"),
    EXCEPTION_AC_POWER_LOST: (PollEvent.POWER_OFF, "AC power was lost from gaming machine"),
    EXCEPTION_GENERAL_TILT: (PollEvent.TILT, "General tilt"),
    EXCEPTION_GAME_STARTED: (PollEvent.GAME_STARTED, "Game has started"),
    EXCEPTION_GAME_ENDED: (PollEvent.GAME_ENDED, "Game has ended"),
}


def encode_general_poll(address: int) -> bytes:
    """The one-byte general poll for ``address`` (1-127)."""
    _check_range("address", address, 1, MAX_ADDRESS)
    return bytes([GENERAL_POLL_BIT | address])


def classify_exception(code: int) -> GeneralPollException:
    _check_range("exception code", code, 0x00, 0xFF)
    event, description = _EXCEPTIONS.get(code, (PollEvent.OTHER, f"Exception {code:#04x}"))
    return GeneralPollException(code, event, description)


def decode_general_poll_response(response: bytes | bytearray) -> GeneralPollException:
    """The EGM's one-byte answer to a general poll (in real-time mode: `decode_real_time_event`)."""
    if len(response) != 1:
        raise SasError(f"a general poll answer is 1 byte, got {len(response)}")
    return classify_exception(response[0])


# --- real-time event reporting (LP 0x0E) ---------------------------------------------------------------
#
# With real-time event reporting enabled (host sends ``address 0x0E 01 CRC``, the EGM ACKs with its address),
# the EGM answers a general poll with ``address 0xFF code data CRC`` instead of the bare code (and still
# with one byte 0x00 when it has nothing). Data carried here (SAS 6 section 15, the events this host reads):
# 0x7E game started: credits wagered (2 BCD), coin-in meter (4 BCD), wager type (1), progressive group (1);
# 0x7F game ended: the game's win in credits (4 BCD). Every other code this module knows carries no data.

LP_ENABLE_REAL_TIME_EVENTS: Final = 0x0E
REAL_TIME_MARKER: Final = 0xFF
RTE_DATA_LENGTHS: Final[dict[int, int]] = {EXCEPTION_GAME_STARTED: 8, EXCEPTION_GAME_ENDED: 4}


@dataclass(frozen=True, slots=True)
class RealTimeEvent:
    """One exception as the EGM reported it; the game fields are set for 0x7E / 0x7F only (credits)."""

    address: int
    exception: GeneralPollException
    credits_wagered: int = 0
    coin_in_credits: int = 0
    wager_type: int = 0
    progressive_group: int = 0
    win_credits: int = 0


def encode_enable_real_time_events(address: int, enable: bool = True) -> bytes:
    _check_range("address", address, 1, MAX_ADDRESS)
    return frame(address, LP_ENABLE_REAL_TIME_EVENTS, bytes([1 if enable else 0]))


def decode_enable_real_time_events(message: bytes | bytearray) -> tuple[int, bool]:
    address, data = _open(message, LP_ENABLE_REAL_TIME_EVENTS)
    _expect_length(message, 5)
    if data[0] not in (0, 1):
        raise SasError(f"0x0E enable byte is 0 or 1, got {data[0]:#04x}")
    return address, data[0] == 1


def encode_real_time_event(event: RealTimeEvent) -> bytes:
    """The EGM's answer to a general poll in real-time mode (0x00 "no activity" is the bare byte)."""
    code = event.exception.code
    if code == EXCEPTION_NO_ACTIVITY:
        return bytes([EXCEPTION_NO_ACTIVITY])
    if code == EXCEPTION_GAME_STARTED:
        data = (
            bcd_encode(event.credits_wagered, 2)
            + bcd_encode(event.coin_in_credits, METER_BCD_BYTES)
            + bytes([_byte("wager type", event.wager_type), _byte("group", event.progressive_group)])
        )
    elif code == EXCEPTION_GAME_ENDED:
        data = bcd_encode(event.win_credits, METER_BCD_BYTES)
    else:
        data = b""
    return frame(event.address, REAL_TIME_MARKER, bytes([code]) + data)


def decode_real_time_event(message: bytes | bytearray) -> RealTimeEvent:
    """A general poll's answer in real-time mode: the bare 0x00, or ``address FF code data CRC``."""
    if len(message) == 1:
        if message[0] != EXCEPTION_NO_ACTIVITY:
            raise SasError(f"a one-byte answer in real-time mode is 0x00, got {message[0]:#04x}")
        return RealTimeEvent(0, classify_exception(EXCEPTION_NO_ACTIVITY))
    address, data = _open(message, REAL_TIME_MARKER)
    if not data:
        raise SasError("real-time event without an exception code")
    code, rest = data[0], data[1:]
    want = RTE_DATA_LENGTHS.get(code, 0)
    if len(rest) != want:
        raise SasError(f"real-time event {code:#04x} carries {want} data bytes, got {len(rest)}")
    exception = classify_exception(code)
    if code == EXCEPTION_GAME_STARTED:
        return RealTimeEvent(
            address,
            exception,
            credits_wagered=bcd_decode(rest[0:2]),
            coin_in_credits=bcd_decode(rest[2:6]),
            wager_type=rest[6],
            progressive_group=rest[7],
        )
    if code == EXCEPTION_GAME_ENDED:
        return RealTimeEvent(address, exception, win_credits=bcd_decode(rest))
    return RealTimeEvent(address, exception)


# --- selected meters (LP 0x2F) -------------------------------------------------------------------------
#
# Request (type M): ``address 2F length game(2 BCD) code... CRC``, length = 2 + number of codes (game 0000 =
# the machine as a whole). Response: ``address 2F length game(2 BCD) {code value}... CRC``. The meter codes
# this host reads are all 4-byte BCD in 0x2F (SAS 6 Table C-7); other codes are refused rather than guessed.

LP_SEND_SELECTED_METERS: Final = 0x2F
METER_TOTAL_COIN_IN: Final = 0x00
METER_TOTAL_COIN_OUT: Final = 0x01
METER_TOTAL_JACKPOT: Final = 0x02
METER_TOTAL_HANDPAID_CANCELLED: Final = 0x03
METER_TOTAL_CANCELLED: Final = 0x04
METER_GAMES_PLAYED: Final = 0x05
METER_GAMES_WON: Final = 0x06
METER_CURRENT_CREDITS: Final = 0x0C
SELECTED_METER_SIZES: Final[dict[int, int]] = {
    code: METER_BCD_BYTES
    for code in (
        METER_TOTAL_COIN_IN,
        METER_TOTAL_COIN_OUT,
        METER_TOTAL_JACKPOT,
        METER_TOTAL_HANDPAID_CANCELLED,
        METER_TOTAL_CANCELLED,
        METER_GAMES_PLAYED,
        METER_GAMES_WON,
        METER_CURRENT_CREDITS,
    )
}


def encode_selected_meters_request(address: int, codes: Sequence[int], game: int = 0) -> bytes:
    _check_range("address", address, 1, MAX_ADDRESS)
    _check_codes(codes)
    body = bcd_encode(game, 2) + bytes(codes)
    return frame(address, LP_SEND_SELECTED_METERS, bytes([len(body)]) + body)


def decode_selected_meters_request(message: bytes | bytearray) -> tuple[int, int, tuple[int, ...]]:
    """(address, game, codes) of a host's 0x2F."""
    address, data = _open(message, LP_SEND_SELECTED_METERS)
    if not data or data[0] != len(data) - 1 or data[0] < 3:
        raise SasError("0x2F request length byte does not match its body")
    codes = tuple(data[3:])
    _check_codes(codes)
    return address, bcd_decode(data[1:3]), codes


def encode_selected_meters_response(address: int, meters: Sequence[tuple[int, int]], game: int = 0) -> bytes:
    """The EGM side: ``(code, value)`` pairs (credits or counts), in the order asked."""
    _check_range("address", address, 1, MAX_ADDRESS)
    _check_codes([code for code, _ in meters])
    body = bytearray(bcd_encode(game, 2))
    for code, value in meters:
        body.append(code)
        body += bcd_encode(value, SELECTED_METER_SIZES[code])
    return frame(address, LP_SEND_SELECTED_METERS, bytes([len(body)]) + body)


def decode_selected_meters_response(message: bytes | bytearray) -> tuple[int, int, dict[int, int]]:
    """(address, game, {code: value}) of an EGM's 0x2F answer."""
    address, data = _open(message, LP_SEND_SELECTED_METERS)
    if not data or data[0] != len(data) - 1 or data[0] < 2:
        raise SasError("0x2F response length byte does not match its body")
    game = bcd_decode(data[1:3])
    values: dict[int, int] = {}
    i = 3
    while i < len(data):
        code = data[i]
        size = SELECTED_METER_SIZES.get(code)
        if size is None:
            raise SasError(f"meter code {code:#04x} is not one this host reads")
        if i + 1 + size > len(data):
            raise SasError(f"0x2F meter {code:#04x} truncated")
        if code in values:
            raise SasError(f"0x2F meter {code:#04x} twice")
        values[code] = bcd_decode(data[i + 1 : i + 1 + size])
        i += 1 + size
    return address, game, values


def _check_codes(codes: Sequence[int]) -> None:
    if not 1 <= len(codes) <= 12:
        raise SasError(f"0x2F asks 1-12 meters, not {len(codes)}")
    for code in codes:
        if code not in SELECTED_METER_SIZES:
            raise SasError(f"meter code {code!r} is not one this host reads")
    if len(set(codes)) != len(codes):
        raise SasError("a meter code asked twice")


# --- progressive win amount (LP 0x84, 0x85) ------------------------------------------------------------
#
# Request (type R): ``address 84|85``. Response: ``address 84|85 group level amount(5 BCD, cents) CRC``
# (11 bytes). 0x85 is "send SAS progressive win amount", read after exception 0x56.

LP_SEND_PROGRESSIVE_WIN: Final = 0x84
LP_SEND_SAS_PROGRESSIVE_WIN: Final = 0x85


@dataclass(frozen=True, slots=True)
class ProgressiveWin:
    address: int
    group: int
    level: int
    amount_cents: int


def encode_progressive_win_response(win: ProgressiveWin, command: int = LP_SEND_SAS_PROGRESSIVE_WIN) -> bytes:
    _check_progressive_command(command)
    _check_range("address", win.address, 1, MAX_ADDRESS)
    _check_range("group", win.group, MIN_GROUP, MAX_GROUP)
    _check_range("level", win.level, MIN_LEVEL, MAX_LEVEL)
    payload = bytes([win.group, win.level]) + bcd_encode(_amount(win.amount_cents), AMOUNT_BCD_BYTES)
    return frame(win.address, command, payload)


def decode_progressive_win_response(
    message: bytes | bytearray, command: int = LP_SEND_SAS_PROGRESSIVE_WIN
) -> ProgressiveWin:
    _check_progressive_command(command)
    address, data = _open(message, command)
    _expect_length(message, 2 + 2 + AMOUNT_BCD_BYTES + CRC_BYTES)
    _check_range("group", data[0], MIN_GROUP, MAX_GROUP)
    _check_range("level", data[1], MIN_LEVEL, MAX_LEVEL)
    return ProgressiveWin(address, data[0], data[1], bcd_decode(data[2:]))


def _check_progressive_command(command: int) -> None:
    if command not in (LP_SEND_PROGRESSIVE_WIN, LP_SEND_SAS_PROGRESSIVE_WIN):
        raise SasError(f"not a progressive win long poll: {command:#04x}")


# --- hand pay information (LP 0x1B) and remote hand-pay reset (LP 0x94) ----------------------------------
#
# 0x1B request (type R): ``address 1B``. Response, 24 bytes: ``address 1B group level amount(5 BCD cents)
# partial_pay(2 BCD cents) reset_id(1) unused(10) CRC``; level 0x00 = not progressive, 0x01-0x20 = a SAS
# progressive level, 0x40 = a non-SAS progressive, 0x80 = cancelled credits. A machine with no hand pay
# pending answers with every field zero.
# 0x94 request (type S): ``address 94 CRC``; response ``address 94 code CRC``: 0x00 the hand pay was reset,
# 0x01 unable to reset, 0x02 not in a hand pay condition.

LP_SEND_HANDPAY_INFO: Final = 0x1B
LP_REMOTE_HANDPAY_RESET: Final = 0x94
HANDPAY_LEVEL_NON_PROGRESSIVE: Final = 0x00
HANDPAY_LEVEL_NON_SAS_PROGRESSIVE: Final = 0x40
HANDPAY_LEVEL_CANCELLED_CREDITS: Final = 0x80
HANDPAY_RESET_DONE: Final = 0x00
HANDPAY_RESET_UNABLE: Final = 0x01
HANDPAY_RESET_NOT_IN_HANDPAY: Final = 0x02
_HANDPAY_LEVELS: Final = frozenset(
    {HANDPAY_LEVEL_NON_PROGRESSIVE, HANDPAY_LEVEL_NON_SAS_PROGRESSIVE, HANDPAY_LEVEL_CANCELLED_CREDITS}
    | set(range(MIN_LEVEL, MAX_LEVEL + 1))
)


@dataclass(frozen=True, slots=True)
class HandpayInfo:
    address: int
    group: int
    level: int
    amount_cents: int
    partial_pay_cents: int = 0
    reset_id: int = 0

    @property
    def pending(self) -> bool:
        return self.amount_cents > 0

    @property
    def progressive_level(self) -> int | None:
        """The SAS progressive level this hand pay pays, or None."""
        return self.level if MIN_LEVEL <= self.level <= MAX_LEVEL else None


def encode_handpay_info_response(info: HandpayInfo) -> bytes:
    _check_range("address", info.address, 1, MAX_ADDRESS)
    _byte("group", info.group)
    if info.level not in _HANDPAY_LEVELS:
        raise SasError(f"hand pay level {info.level:#04x} is not a SAS level code")
    payload = (
        bytes([info.group, info.level])
        + bcd_encode(_amount(info.amount_cents), AMOUNT_BCD_BYTES)
        + bcd_encode(info.partial_pay_cents, 2)
        + bytes([_byte("reset id", info.reset_id)])
        + bytes(10)
    )
    return frame(info.address, LP_SEND_HANDPAY_INFO, payload)


def decode_handpay_info_response(message: bytes | bytearray) -> HandpayInfo:
    address, data = _open(message, LP_SEND_HANDPAY_INFO)
    _expect_length(message, 24)
    if data[1] not in _HANDPAY_LEVELS:
        raise SasError(f"hand pay level {data[1]:#04x} is not a SAS level code")
    return HandpayInfo(address, data[0], data[1], bcd_decode(data[2:7]), bcd_decode(data[7:9]), data[9])


def encode_remote_handpay_reset(address: int) -> bytes:
    _check_range("address", address, 1, MAX_ADDRESS)
    return frame(address, LP_REMOTE_HANDPAY_RESET)


def encode_remote_handpay_reset_response(address: int, code: int) -> bytes:
    if code not in (HANDPAY_RESET_DONE, HANDPAY_RESET_UNABLE, HANDPAY_RESET_NOT_IN_HANDPAY):
        raise SasError(f"0x94 answer code {code:#04x} unknown")
    _check_range("address", address, 1, MAX_ADDRESS)
    return frame(address, LP_REMOTE_HANDPAY_RESET, bytes([code]))


def decode_remote_handpay_reset_response(message: bytes | bytearray) -> tuple[int, int]:
    address, data = _open(message, LP_REMOTE_HANDPAY_RESET)
    _expect_length(message, 5)
    if data[0] not in (HANDPAY_RESET_DONE, HANDPAY_RESET_UNABLE, HANDPAY_RESET_NOT_IN_HANDPAY):
        raise SasError(f"0x94 answer code {data[0]:#04x} unknown")
    return address, data[0]


# --- shutdown and startup (LP 0x01, 0x02) ----------------------------------------------------------------
#
# Type S, ``address 01|02 CRC`` (4 bytes; Aristocrat LP01ShutdownParser.cs @ d153cca9, LP02StartupParser.cs
# @ c5b13119: "Address 01-7F, Command 01 Shutdown / 02 Startup, CRC"). 0x01 locks out play (the machine
# finishes a game in progress and starts no other: its meters, exceptions and long polls go on), 0x02
# enables play again. The machine answers its address (ACK), or its address | 0x80 (NACK); a broadcast
# (address 0) is not one of them. Whether the machine plays also depends on its own locks (a hand pay
# pending, the progressive link lost): 0x02 lifts the host's lock-out only.

LP_SHUTDOWN: Final = 0x01
LP_STARTUP: Final = 0x02


def encode_play_control(address: int, enable: bool) -> bytes:
    """LP 0x02 (``enable``: startup) or 0x01 (shutdown) to one machine."""
    _check_range("address", address, 1, MAX_ADDRESS)
    return frame(address, LP_STARTUP if enable else LP_SHUTDOWN)


def decode_play_control(message: bytes | bytearray) -> tuple[int, bool]:
    """(address, enable) of a host's LP 0x01 (False) or 0x02 (True)."""
    if len(message) < 2 or message[1] not in (LP_SHUTDOWN, LP_STARTUP):
        raise SasError("not a shutdown/startup long poll")
    address, _ = _open(message, message[1])
    _expect_length(message, 4)
    _check_range("address", address, 1, MAX_ADDRESS)
    return address, message[1] == LP_STARTUP


# --- framing: how long a message is, from its first bytes -------------------------------------------------
#
# A serial line has no frame boundaries: the reader must know from the first bytes how many follow. These
# two functions say it (None: more bytes are needed to tell); the driver of the line reads that many or
# times out (a truncated frame).

# Type R long polls: ``address command`` alone.
TYPE_R_POLLS: Final = frozenset(
    {
        LP_SEND_METERS,
        LP_SEND_METERS_10_15,
        LP_SEND_HANDPAY_INFO,
        LP_SEND_PROGRESSIVE_WIN,
        LP_SEND_SAS_PROGRESSIVE_WIN,
    }
)
_FIXED_HOST_LENGTHS: Final[dict[int, int]] = {
    LP_SINGLE_LEVEL_BROADCAST: 11,
    LP_REMOTE_HANDPAY_RESET: 4,
    LP_ENABLE_REAL_TIME_EVENTS: 5,
    LP_SHUTDOWN: 4,
    LP_STARTUP: 4,
}
_VARIABLE: Final = frozenset({LP_MULTI_LEVEL_BROADCAST, LP_SEND_SELECTED_METERS})


def host_message_length(head: bytes | bytearray) -> int | None:
    """The length of a host message from its first bytes (the first one carried the wake-up bit): 1 for a
    general poll, else by the long poll's command. SasError for a command this EGM side does not know."""
    if not head:
        return None
    if head[0] & GENERAL_POLL_BIT:
        return 1
    if len(head) < 2:
        return None
    command = head[1]
    if command in TYPE_R_POLLS:
        return 2
    if command in _FIXED_HOST_LENGTHS:
        return _FIXED_HOST_LENGTHS[command]
    if command in _VARIABLE:
        return None if len(head) < 3 else 3 + head[2] + CRC_BYTES
    raise SasError(f"unknown long poll {command:#04x}")


_FIXED_EGM_LENGTHS: Final[dict[int, int]] = {
    LP_SEND_METERS: 36,
    LP_SEND_METERS_10_15: 28,
    LP_SEND_HANDPAY_INFO: 24,
    LP_SEND_PROGRESSIVE_WIN: 11,
    LP_SEND_SAS_PROGRESSIVE_WIN: 11,
    LP_REMOTE_HANDPAY_RESET: 5,
}


def response_length(command: int | None, head: bytes | bytearray, *, real_time: bool = True) -> int | None:
    """The length of an EGM's answer to the poll ``command`` (None: a general poll; in real-time mode its
    answer is ``address FF code data CRC`` or the bare 0x00). A one-byte ACK/NACK answers a type S poll;
    a NACK (address | 0x80) may answer any long poll. None: more bytes are needed to tell."""
    if not head:
        return None
    if command is None:
        if not real_time or head[0] == EXCEPTION_NO_ACTIVITY:
            return 1
        if len(head) < 3:
            return None
        return 3 + RTE_DATA_LENGTHS.get(head[2], 0) + CRC_BYTES
    if head[0] & NACK_BIT:
        return 1  # the EGM's NACK, or a byte that is no address: one byte, decoded as an error
    if command in _FIXED_EGM_LENGTHS:
        return _FIXED_EGM_LENGTHS[command]
    if command == LP_SEND_SELECTED_METERS:
        return None if len(head) < 3 else 3 + head[2] + CRC_BYTES
    return 1  # a type S poll's ACK


def _byte(name: str, value: int) -> int:
    _check_range(name, value, 0, 0xFF)
    return value


# --- helpers -------------------------------------------------------------------------------------------


def _check_range(name: str, value: int, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SasError(f"{name} must be an int, got {type(value).__name__}")
    if not low <= value <= high:
        raise SasError(f"{name} {value} outside {low}-{high}")


def _amount(amount_cents: int) -> int:
    _check_range("amount_cents", amount_cents, 0, MAX_AMOUNT_CENTS)
    return amount_cents


def _open(message: bytes | bytearray, command: int) -> tuple[int, bytes]:
    """Check size, CRC, address and command; return the address and the bytes between command and CRC."""
    if len(message) < 2 + CRC_BYTES:
        raise SasError(f"frame too short: {len(message)} bytes")
    if not check_crc(message):
        raise SasError(f"CRC mismatch in {bytes(message).hex(' ')}")
    address, got = message[0], message[1]
    if address > MAX_ADDRESS:
        raise SasError(f"address byte {address:#04x} has bit 7 set")
    if got != command:
        raise SasError(f"expected long poll {command:#04x}, got {got:#04x}")
    return address, bytes(message[2:-CRC_BYTES])


def _expect_length(message: bytes | bytearray, length: int) -> None:
    if len(message) != length:
        raise SasError(f"long poll {message[1]:#04x} is {length} bytes, got {len(message)}")


def _open_meters(message: bytes | bytearray, command: int, count: int) -> tuple[int, list[int]]:
    address, data = _open(message, command)
    _expect_length(message, 2 + count * METER_BCD_BYTES + CRC_BYTES)
    values = [bcd_decode(data[i : i + METER_BCD_BYTES]) for i in range(0, len(data), METER_BCD_BYTES)]
    return address, values


def _meters_frame(address: int, command: int, values: Sequence[int]) -> bytes:
    _check_range("address", address, 1, MAX_ADDRESS)
    payload = b"".join(bcd_encode(v, METER_BCD_BYTES) for v in values)
    return frame(address, command, payload)


def _to_cents(credits: int, accounting_denom_cents: int) -> int:
    _check_range("accounting_denom_cents", accounting_denom_cents, 1, 10**8)
    return credits * accounting_denom_cents


def _to_credits(cents: int, accounting_denom_cents: int) -> int:
    _check_range("accounting_denom_cents", accounting_denom_cents, 1, 10**8)
    _check_range("meter (cents)", cents, 0, MAX_METER * accounting_denom_cents)
    credits, rest = divmod(cents, accounting_denom_cents)
    if rest:
        raise SasError(f"{cents} cents is not a whole number of {accounting_denom_cents}-cent credits")
    return credits
