"""Every event the system publishes: its type and the payload screens, consoles and meter pages receive.

One `EventType` member per type, one payload TypedDict per member (`PAYLOADS`). A payload is what the
stream's readers may see: the audit entry of the same change keeps its own data (halls.services.audit),
built apart, so nothing meant for the audit reaches a screen by being in the same dict. `events.emit`
checks each payload against its type (`check`); the test run makes a mismatch fail (`events.STRICT`).
"""

import types
import typing
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from functools import cache
from typing import (
    Any,
    Literal,
    NotRequired,
    TypedDict,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)


class EventType(StrEnum):
    # halls, on the room stream ("room.<id>")
    SESSION_OPENED = "session.opened"
    SESSION_CLOSED = "session.closed"
    # On the room's staff stream ("room.<id>.staff"). Not the audit action's name (session.check_recorded):
    # an event type is spelled only here (tests/halls/test_eventtypes.py).
    SESSION_CHECK_RECORDED = "session.check"
    ROOM_VOICE = "room.voice"
    ROOM_RENAMED = "room.renamed"
    SCREEN_RENAMED = "screen.renamed"
    # bingo, a game's steps on the room stream
    GAME_CREATED = "game.created"
    GAME_SALES_OPENED = "game.sales_opened"
    GAME_SALES_CLOSED = "game.sales_closed"
    GAME_DRAW_STARTED = "game.draw_started"
    GAME_PAUSED = "game.paused"
    GAME_RESUMED = "game.resumed"
    GAME_CLOSED = "game.closed"
    GAME_VOIDED = "game.voided"
    GAME_DEVICE_SWITCHED = "game.device_switched"
    SALES_SOLD = "sales.sold"
    SALES_RETURNED = "sales.returned"
    BALL_DRAWN = "ball.drawn"
    BALL_CORRECTED = "ball.corrected"
    CLAIM_VERIFIED = "claim.verified"
    PRIZE_AWARDED = "prize.awarded"
    # bingo, on the room's staff stream ("room.<id>.staff": the caller's consoles only)
    CONSOLE_UNCLAIMED = "console.unclaimed"
    GAME_VOID_REASON = "game.void_reason"
    # bingo prize programs, on the room stream
    PROGRAMS_ACTIVATED = "programs.activated"
    PROGRAMS_CHANGED = "programs.changed"
    PROGRAMS_DEACTIVATED = "programs.deactivated"
    PROGRAMS_BOLSA_OPENED = "programs.bolsa_opened"
    PROGRAMS_BOLSA_CHANGED = "programs.bolsa_changed"
    PROGRAMS_DUE = "programs.due"
    PROGRAMS_PICK_SET = "programs.pick_set"
    PROGRAMS_AWARDED = "programs.awarded"
    # jackpots, on the pool stream ("pool.<id>"); POOL_HIT and POOL_METERS on the room streams too
    POOL_CREATED = "pool.created"
    POOL_MEMBERS_CHANGED = "pool.members_changed"
    POOL_PARAMETERS_CHANGED = "pool.parameters_changed"
    POOL_CORRECTED = "pool.corrected"
    POOL_HIT = "pool.hit"
    POOL_METERS = "pool.meters"
    # jackpots.widearea, on a venue's mirror pool stream ("pool.<id>"): the wide-area levels offered or
    # withdrawn (the central silent past the pool's window), and a hit of this venue decided at the central
    WIDE_AREA_STATE = "widearea.state"
    WIDE_AREA_DECIDED = "widearea.decided"
    WIDE_AREA_RECONCILED = "widearea.reconciled"
    # jackpots tables, on the table stream ("table.<id>")
    TABLE_CREATED = "table.created"
    TABLE_JOINED_POOL = "table.joined_pool"
    TABLE_LEFT_POOL = "table.left_pool"
    TABLE_STATE_CHANGED = "table.state_changed"
    HAND_OPENED = "hand.opened"
    HAND_BETS_REGISTERED = "hand.bets_registered"
    HAND_CARDS_REGISTERED = "hand.cards_registered"
    HAND_SETTLED = "hand.settled"
    HAND_VOIDED = "hand.voided"
    # the cashier, on the venue's cashier stream ("cashier.<venue id>")
    TICKET_ISSUED = "ticket.issued"
    TICKET_REDEEMED = "ticket.redeemed"
    TICKET_EXPIRED = "ticket.expired"
    CASHIER_SHIFT_OPENED = "cashier.shift_opened"
    CASHIER_SHIFT_CLOSED = "cashier.shift_closed"
    PAYABLE_CREATED = "payable.created"
    PAYABLE_PAID = "payable.paid"
    # the door, on the venue's door stream ("door.<venue id>"): the door's pages and the operator's
    DOOR_PRESENCE = "door.presence"
    DOOR_ALERT = "door.alert"
    DOOR_ALERT_ACKNOWLEDGED = "door.alert_cleared"
    # electronic and automatic bingo, on the speciality's room stream ("room.<id>": screens and terminals)
    EGAME_SALES_OPENED = "egame.sales_opened"
    EGAME_SALES_CLOSED = "egame.sales_closed"
    EGAME_BALL = "egame.ball"
    EGAME_PRIZE = "egame.prize"
    EGAME_CLOSED = "egame.closed"
    EGAME_METERS = "egame.meters"
    # electronic bingo, on a terminal's own stream ("terminal.<id>"): only when something of it changed
    TERMINAL_CARDS = "terminal.cards"
    TERMINAL_PRIZE = "terminal.prize"
    TERMINAL_BALANCE = "terminal.balance"
    TERMINAL_STATE = "terminal.state"
    # interconnected bingo (bingo.network.interconnected), on the room stream of each member room of the venue
    NETWORK_PRIZE_METER = "network.prize_meter"
    # simultaneous bingo at the central, on the game's stream ("simultaneous.<code>": the central's pages)
    SIMULTANEOUS_GAME = "simultaneous.game"
    # the gaming authority's node (HALL_ROLE=regulator), on its live stream ("regulator.live": the portal)
    REGULATOR_MESSAGE = "regulator.message"


# --- halls ---------------------------------------------------------------------------------------------


class SessionOpened(TypedDict):
    session: int
    opened_at: datetime


class SessionClosed(TypedDict):
    session: int


class SessionCheckRecorded(TypedDict):
    """A material check recorded before the room's session opens (halls.services.sessions.record_check), on
    the room's staff stream: every console of the room shows it done (or failed, with its note), who ran it
    and when, without a reload."""

    id: int
    room: int
    check: str  # blower, reserve or reader
    ok: bool
    note: str
    checked_by: str
    checked_at: datetime


class RoomRenamed(TypedDict):
    """A room's new name (halls.services.setup.rename_room): its screens show it without a reload."""

    room: int
    name: str


class ScreenRenamed(TypedDict):
    """A screen's new name (its page's title)."""

    room: int
    screen: int
    name: str


class RoomVoice(TypedDict):
    """The caller's voice of a room (halls.services.voice): which screen says it, muted, how loud."""

    room: int
    audio_screen: int | None
    muted: bool
    volume: int  # 0–100


# --- bingo: the room stream -----------------------------------------------------------------------------


class GameStep(TypedDict):
    """What every event of a game starts with; `state` is the game's state once the change is made."""

    game: int
    number: int
    state: str


class DrawProof(TypedDict):
    """A game's draw as published: verifiable by seed (its commitment, its public page) or not."""

    verifiable: bool
    commitment: str  # SHA-256 of the seed, 64 hex; "" when not verifiable by seed
    url: str  # the draw's public page; "" when not verifiable by seed


class GameCreated(GameStep):
    draw_source: str
    draw: DrawProof


class OfferedSeries(TypedDict):
    series: str
    face_value: str  # the price of one card, "1.00"
    cards: int  # the number of cards in the series (TB-24)


class GameSalesOpened(GameStep):
    """S3: the session's first sale announces the series on sale and their face value (later games: [])."""

    offered: list[OfferedSeries]
    voice: list[
        str
    ]  # the clips the audio screen says (bingo.traditional.voice.series_clips); [] when nothing is said


class GameSalesClosed(GameStep):
    announcement: dict[str, Any]  # bingo.announce: prizes, sales, the formula, the programs in play


class GameDrawStarted(GameStep):
    draw_source: str


class GamePaused(GameStep):
    by_claim: bool


class GameVoided(GameStep):
    message: str  # the caller's words for the hall; the reason goes to the staff stream


class GameDeviceSwitched(GameStep):
    """The draw goes on with another device (TB-31): the reason stays in the audit and the recall."""

    device: str
    kind: str
    draw_source: str
    at_ordinal: int


class SalesTotals(TypedDict):
    cards_sold: int
    sales_total: Decimal


class Sale(SalesTotals):
    series: str
    first: int
    last: int
    cards: int
    amount: Decimal


class SalesChanged(GameStep, Sale):
    pass


class DrawnBall(TypedDict):
    ordinal: int
    ball: int
    colour: str
    source: str
    drawn_at: datetime


class BallDrawn(GameStep, DrawnBall):
    pass


class CorrectedClaim(TypedDict):
    claim: int
    kind: str
    valid: bool
    refusal: str
    reason: str
    code: str  # bingo.claims.VerdictCode, with its facts: the reason as data
    facts: dict[str, int | list[int] | None]
    winning_row: int | None


class BallCorrected(GameStep):
    ordinal: int
    old: int
    ball: int
    colour: str
    claim_window: str
    line_won_at: int | None
    claims: list[CorrectedClaim]


class ClaimVerdict(TypedDict):
    claim: int
    kind: str
    series: str
    serial: int
    valid: bool
    refusal: str
    # in English (the audit's); `code` and `facts` say it as data (bingo.claims.VerdictCode)
    reason: str
    code: str
    facts: dict[str, int | list[int] | None]
    bound_ordinal: int | None
    winning_row: int | None
    master_card: list[list[int | None]] | None  # shown on the monitors during verification (TB-43)
    claim_window: str


class ClaimVerified(GameStep, ClaimVerdict):
    pass


class PrizeWinner(TypedDict):
    series: str
    serial: int
    amount: Decimal
    hall: NotRequired[str]  # a network prize's: the hall where the card won (its name)


class Prize(TypedDict):
    kind: str
    ordinal: int
    amount: Decimal
    share: Decimal
    remainder: Decimal
    remainder_to: str
    winners: list[PrizeWinner]


class PrizeAwarded(GameStep, Prize):
    pass


class ProgramPickSet(GameStep):
    program: str
    pick: dict[str, Any] | None


class ProgramsAwarded(GameStep):
    awards: list[
        dict[str, Any]
    ]  # bingo.traditional.services.programs.readmodels.game_program, one per program


# --- bingo: the staff stream ----------------------------------------------------------------------------


class UnclaimedCard(TypedDict):
    series: str
    serial: int
    since_ball: int


class Unclaimed(TypedDict):
    line: list[UnclaimedCard]
    bingo: list[UnclaimedCard]
    line_count: int
    bingo_count: int


class ConsoleUnclaimed(Unclaimed):
    game: int
    ordinal: int  # the ball the list is computed at


class GameVoidReason(TypedDict):
    game: int
    reason: str


# --- bingo: prize programs ------------------------------------------------------------------------------


class ProgramVersion(TypedDict):
    program: int
    code: str
    type: str
    name: str
    pool: int | None
    version: int
    effective_from: datetime
    params: dict[str, Any]
    provenance: dict[str, Any]
    authorisation_ref: str
    digest: str  # SHA-256 of the version's terms, as the posted prize table prints it


class ProgramDeactivated(TypedDict):
    program: int
    code: str
    type: str
    pool: int | None


class BolsaOpened(TypedDict):
    room: int
    pool: int
    funding_percent: Decimal
    authorisation_ref: str


class BolsaChanged(TypedDict):
    room: int
    pool: int
    old: Decimal
    new: Decimal
    authorisation_ref: str


class DueProgram(TypedDict):
    code: str
    name: str
    type: str
    slot: str | None
    operating_day: str
    amount: str
    reached: bool


class ProgramsDue(TypedDict):
    room: int
    programs: list[DueProgram]


# --- jackpots: the pool stream --------------------------------------------------------------------------


class PoolHead(TypedDict):
    pool: int
    code: str


class PoolDescription(TypedDict):
    name: str
    jurisdiction: str
    rule_pack: str
    carousel_bet: Decimal | None
    authorisation_ref: str
    venue: int | None
    network: int | None
    levels: list[dict[str, Any]]  # jackpots.services.pools.public_parameters, with the level's id


class PoolCreated(PoolHead, PoolDescription):
    pass


class Membership(TypedDict):
    member: str
    venue: int
    change: Literal["added", "removed"]


class PoolMembersChanged(PoolHead, Membership):
    pass


class ParametersChange(TypedDict):
    level: int
    level_name: str
    old: dict[str, Any]
    new: dict[str, Any]
    authorisation_ref: str
    operator_seed: Decimal
    amount: Decimal


class PoolParametersChanged(PoolHead, ParametersChange):
    pass


class Correction(TypedDict):
    level: int
    level_name: str
    delta: Decimal
    reason: str
    authorised_by: str
    amount: Decimal


class PoolCorrected(PoolHead, Correction):
    pass


class PoolHit(PoolHead):
    """One paid winner of a settlement, as the engine tells it on the pool's stream."""

    settlement: int
    order: int
    level: int
    level_name: str
    kind: str
    source: str
    table: Any  # the table's id the table app put in the settlement's context, if any
    label: str
    seat: str
    hand: str
    category: str
    amount: Decimal
    new_amount: Decimal
    at: datetime


class PoolHitShown(TypedDict):
    """The same winner as the hall screens word it, on the room streams (readmodels.screens.hit_display)."""

    pool: int
    name: str
    currency: str
    settlement: int | None
    order: int | None
    level: int | None
    level_name: str
    kind: str
    source: str
    source_kind: str
    machine: str
    seat: str
    hand: str
    category: str
    category_label: str
    amount: str
    new_amount: str | None
    at: str | None
    meter: dict[str, Any] | None


class PoolMeters(TypedDict):
    pools: list[dict[str, Any]]  # readmodels.screens.pool_display of each changed pool the room shows


class WideAreaState(TypedDict):
    pool: int  # the venue's mirror pool
    central: str  # the central pool's code
    state: Literal["available", "unavailable", "locked"]
    levels: list[str]  # the wide-area levels concerned


class WideAreaReconciled(TypedDict):
    pool: int  # the venue's mirror pool
    central: str
    state: Literal["agreed", "differs"]
    differences: int  # how many the venue's checks found (0: agreed)


class WideAreaDecided(TypedDict):
    pool: int
    central: str
    level: str
    source: str
    outcome: Literal["won", "redecided", "lost"]
    amount: Decimal


# --- jackpots tables: the table stream -------------------------------------------------------------------


class TableHead(TypedDict):
    table: int
    table_number: int


class TableCreated(TableHead):
    number: int
    name: str
    game: str
    table_minimum: Decimal
    seats: int
    layout: str
    rule_pack: str
    state: str
    pool: int | None


class TablePool(TableHead):
    pool: int
    pool_code: str
    # Joined by itself: a new table of a carrusel of all the tables of its game (spec §6.12).
    automatic: NotRequired[bool]


class TableStateChanged(TableHead):
    old: str
    new: str
    reason: str  # why it closed ("" when it opens again)


class HandHead(TableHead):
    hand: int
    number: int


class HandOpened(HandHead):
    pool: int


class SeatBetShown(TypedDict):
    seat: int
    initial_bet: Decimal
    pool_bet: Decimal
    contributed: bool


class HandBetsRegistered(HandHead):
    bets: NotRequired[list[SeatBetShown]]
    manual_total: NotRequired[Decimal]


class SeatCardsShown(TypedDict):
    seat: int
    cards: str
    discard: bool
    rank: str


class SeatForfeit(TypedDict):
    seat: int
    reason: str


class HandCardsRegistered(HandHead):
    community_cards: NotRequired[str]
    cards: NotRequired[list[SeatCardsShown]]
    forfeited: NotRequired[list[SeatForfeit]]


class PaidSeat(TypedDict):
    seat: int
    category: str
    discard: bool
    amount: Decimal


class HandSettled(HandHead):
    settlement: int | None
    meter_before: Decimal | None
    meter_after_payouts: Decimal | None
    meter_after: Decimal | None
    payouts: list[PaidSeat]
    total_paid: Decimal


class HandVoided(HandHead):
    reason: str
    contributed: Decimal  # pool bets already in the pool's ledger (a refund is a meter correction)


# --- the cashier: the venue's cashier stream ---------------------------------------------------------------


class TicketChanged(TypedDict):
    ticket: int
    number: str
    amount: Decimal
    state: str
    at: datetime


class CashierShift(TypedDict):
    shift: int
    till: int
    cashier: str  # username
    state: str  # open, closed


class DoorPresence(TypedDict):
    """Who is inside after a visit or an exit (halls.door.services.presence): counts, never a person."""

    day: str  # the door day, ISO date
    admitted: int
    left: int
    inside: int


class PayableWaiting(TypedDict):
    """A prize awarded and waiting at the cashier (halls.cashier.Payable), as the till page lists it."""

    payable: int
    kind: str  # line / bingo / accumulated / table / machine
    source: str
    description: str
    amount: Decimal
    state: str
    awarded_at: datetime


class PayablePaid(PayableWaiting):
    paid_at: datetime
    paid_by: str
    method: str  # cash / player_card / ticket
    receipt: str


# --- the door: the venue's door stream -------------------------------------------------------------------


class DoorAlertRaised(TypedDict):
    """A player inside (admitted today) whose admission was withdrawn, their cards blocked
    (halls.door.services.players): ids, the admitting visit's door and time, the register's code (never its
    reason); no document, digest or name."""

    alert: int
    kind: str  # register_listed / self_excluded
    raised_at: datetime
    visit: int | None  # the visit that admitted them today
    door: str | None
    admitted_at: datetime | None
    register: str | None
    register_version: int | None
    cards_blocked: int


class DoorAlertAcknowledged(TypedDict):
    alert: int
    acknowledged_at: datetime
    acknowledged_by: str


# --- electronic bingo: the speciality's room stream, and each terminal's stream ----------------------------


class EGameStep(TypedDict):
    """What every event of an electronic game starts with; `state` is the game's once the change is made."""

    speciality: int
    game: int
    number: int
    state: str


class EPrizeTerms(TypedDict):
    """One prize as announced: its amount (a sales prize) or its pool's meter (an accumulated prize)."""

    code: str
    name: str
    type: str
    pattern: str
    in_play: bool
    amount: Decimal | None
    max_ball: int | None


class EGameSalesOpened(EGameStep):
    sales_close_at: datetime
    card_price: Decimal
    commitment: NotRequired[str]  # the draw's (issue 28): SHA-256 of its seed; absent when not committed


class EGameSalesClosed(EGameStep):
    cards: int
    sales: Decimal
    prizes: list[EPrizeTerms]
    golden_ball: int | None
    sales_digest: NotRequired[str]  # the draw's sales digest (bingo-sales/v1), when it was committed


class EGameBall(EGameStep):
    ordinal: int
    ball: int
    drawn_at: datetime


class EGamePrize(EGameStep):
    code: str
    name: str
    type: str
    ordinal: int
    won: bool
    winners: int
    amount: Decimal
    share: Decimal


class EGameClosed(EGameStep):
    balls: int
    prizes: list[EGamePrize]


class EMeter(TypedDict):
    code: str
    name: str
    amount: Decimal
    max_ball: int | None


class EGameMeters(TypedDict):
    speciality: int
    meters: list[EMeter]


class TerminalHead(TypedDict):
    terminal: int


class ECardShown(TypedDict):
    card: int
    cells: list[int]  # the layout's cell order, 0 = the free cell


class TerminalCards(TerminalHead):
    game: int
    purchase: int
    cards: list[ECardShown]
    balance: Decimal


class TerminalPrize(TerminalHead):
    game: int
    code: str
    name: str
    ordinal: int
    card: int
    amount: Decimal
    balance: Decimal


class TerminalBalance(TerminalHead):
    balance: Decimal


class TerminalStateChanged(TerminalHead):
    state: str
    reason: str


# --- interconnected bingo: the member rooms' streams --------------------------------------------------------


class NetworkPrizeMeter(TypedDict):
    """A network prize's meter as the central last sent it: what a member room's screens and terminals
    show, labelled by its kind: an interconnected prize ("Premio interconexionado", IB-01) with the max
    ball common to every hall, or automatic bingo's Gran Línea / Gran Bingo (AB-05, AB-08) with the max
    ball of the speciality's own Gran prize, if its table sets one (None: the first in the network wins)."""

    prize: str  # the prize's code in the network
    kind: str  # bingo.network.interconnected.models.PrizeKind: interconnected, gran_linea, gran_bingo
    name: str
    amount: Decimal  # whole cents, rounded down
    max_ball: int | None
    at: datetime  # when the central read it


# --- simultaneous bingo: the central's network stream -----------------------------------------------------


class SimultaneousGame(TypedDict):
    """A network game as the central now holds it (after a change: created, allocated, opened, closed,
    a ball, a decision)."""

    code: str
    state: str
    halls: int
    cards_sold: int
    sales_total: Decimal
    balls_drawn: int
    last_ball: int | None


# --- the gaming authority's node: its live stream -----------------------------------------------------------


class RegulatorMessage(TypedDict):
    """A run of feed messages the node accepted from one installation in one batch
    (halls.regulator.services.live.published), told by its last: which installation, the run's sequences,
    the last one's kind, and the game or pool it speaks of. The portal's pages reload what they show."""

    message: int  # the last message's FeedMessage id
    installation: str  # its uid
    first: int  # the run's first sequence
    sequence: int  # and its last
    kind: str  # a halls.feed.kinds.FeedKind value
    at: str  # the fact's time, as the installation sent it
    game: str  # the game it speaks of ("electronic-40"), or ""
    pool: str  # the pool it speaks of (its code), or ""


# Each type's payload; POOL_HIT is the engine's fact on the pool stream and the screens' wording on rooms.
PAYLOADS: dict[EventType, Any] = {
    EventType.SESSION_OPENED: SessionOpened,
    EventType.SESSION_CLOSED: SessionClosed,
    EventType.SESSION_CHECK_RECORDED: SessionCheckRecorded,
    EventType.ROOM_VOICE: RoomVoice,
    EventType.ROOM_RENAMED: RoomRenamed,
    EventType.SCREEN_RENAMED: ScreenRenamed,
    EventType.GAME_CREATED: GameCreated,
    EventType.GAME_SALES_OPENED: GameSalesOpened,
    EventType.GAME_SALES_CLOSED: GameSalesClosed,
    EventType.GAME_DRAW_STARTED: GameDrawStarted,
    EventType.GAME_PAUSED: GamePaused,
    EventType.GAME_RESUMED: GameStep,
    EventType.GAME_CLOSED: GameStep,
    EventType.GAME_VOIDED: GameVoided,
    EventType.GAME_DEVICE_SWITCHED: GameDeviceSwitched,
    EventType.SALES_SOLD: SalesChanged,
    EventType.SALES_RETURNED: SalesChanged,
    EventType.BALL_DRAWN: BallDrawn,
    EventType.BALL_CORRECTED: BallCorrected,
    EventType.CLAIM_VERIFIED: ClaimVerified,
    EventType.PRIZE_AWARDED: PrizeAwarded,
    EventType.CONSOLE_UNCLAIMED: ConsoleUnclaimed,
    EventType.GAME_VOID_REASON: GameVoidReason,
    EventType.PROGRAMS_ACTIVATED: ProgramVersion,
    EventType.PROGRAMS_CHANGED: ProgramVersion,
    EventType.PROGRAMS_DEACTIVATED: ProgramDeactivated,
    EventType.PROGRAMS_BOLSA_OPENED: BolsaOpened,
    EventType.PROGRAMS_BOLSA_CHANGED: BolsaChanged,
    EventType.PROGRAMS_DUE: ProgramsDue,
    EventType.PROGRAMS_PICK_SET: ProgramPickSet,
    EventType.PROGRAMS_AWARDED: ProgramsAwarded,
    EventType.POOL_CREATED: PoolCreated,
    EventType.WIDE_AREA_STATE: WideAreaState,
    EventType.WIDE_AREA_DECIDED: WideAreaDecided,
    EventType.WIDE_AREA_RECONCILED: WideAreaReconciled,
    EventType.POOL_MEMBERS_CHANGED: PoolMembersChanged,
    EventType.POOL_PARAMETERS_CHANGED: PoolParametersChanged,
    EventType.POOL_CORRECTED: PoolCorrected,
    EventType.POOL_HIT: PoolHit | PoolHitShown,
    EventType.POOL_METERS: PoolMeters,
    EventType.TABLE_CREATED: TableCreated,
    EventType.TABLE_JOINED_POOL: TablePool,
    EventType.TABLE_LEFT_POOL: TablePool,
    EventType.TABLE_STATE_CHANGED: TableStateChanged,
    EventType.HAND_OPENED: HandOpened,
    EventType.HAND_BETS_REGISTERED: HandBetsRegistered,
    EventType.HAND_CARDS_REGISTERED: HandCardsRegistered,
    EventType.HAND_SETTLED: HandSettled,
    EventType.HAND_VOIDED: HandVoided,
    EventType.TICKET_ISSUED: TicketChanged,
    EventType.TICKET_REDEEMED: TicketChanged,
    EventType.TICKET_EXPIRED: TicketChanged,
    EventType.CASHIER_SHIFT_OPENED: CashierShift,
    EventType.CASHIER_SHIFT_CLOSED: CashierShift,
    EventType.PAYABLE_CREATED: PayableWaiting,
    EventType.DOOR_PRESENCE: DoorPresence,
    EventType.PAYABLE_PAID: PayablePaid,
    EventType.DOOR_ALERT: DoorAlertRaised,
    EventType.DOOR_ALERT_ACKNOWLEDGED: DoorAlertAcknowledged,
    EventType.EGAME_SALES_OPENED: EGameSalesOpened,
    EventType.EGAME_SALES_CLOSED: EGameSalesClosed,
    EventType.EGAME_BALL: EGameBall,
    EventType.EGAME_PRIZE: EGamePrize,
    EventType.EGAME_CLOSED: EGameClosed,
    EventType.EGAME_METERS: EGameMeters,
    EventType.TERMINAL_CARDS: TerminalCards,
    EventType.TERMINAL_PRIZE: TerminalPrize,
    EventType.TERMINAL_BALANCE: TerminalBalance,
    EventType.TERMINAL_STATE: TerminalStateChanged,
    EventType.NETWORK_PRIZE_METER: NetworkPrizeMeter,
    EventType.SIMULTANEOUS_GAME: SimultaneousGame,
    EventType.REGULATOR_MESSAGE: RegulatorMessage,
}


# --- the check ------------------------------------------------------------------------------------------


class EventSchemaError(TypeError):
    pass


def check(type: EventType, data: Mapping[str, Any]) -> None:
    """Raise EventSchemaError unless `data` is a payload of `type`: its keys, and each value's type."""
    if not isinstance(type, EventType):
        raise EventSchemaError(f"{type!r} is not an EventType")
    problem = _problem(PAYLOADS[type], data, "data")
    if problem:
        raise EventSchemaError(f"{type.value}: {problem}")


@cache
def _hints(typed_dict: Any) -> dict[str, Any]:
    return get_type_hints(typed_dict)


def _problem(expected: Any, value: Any, where: str) -> str | None:
    """What is wrong with `value` as an `expected` (None when nothing is)."""
    if expected is Any or expected is object:
        return None
    origin = get_origin(expected)
    if origin in (Union, types.UnionType):
        options = get_args(expected)
        found = [_problem(option, value, where) for option in options]
        return None if None in found else " / ".join(p for p in found if p)
    if expected is None or expected is type(None):
        return None if value is None else f"{where} is {value!r}, not None"
    if origin is Literal:
        return (
            None if value in get_args(expected) else f"{where} is {value!r}, not one of {get_args(expected)}"
        )
    if is_typeddict(expected):
        return _typeddict_problem(expected, value, where)
    if origin is list:
        if not isinstance(value, list | tuple):
            return f"{where} is a {type(value).__name__}, not a list"
        (item,) = get_args(expected)
        return next((p for i, v in enumerate(value) if (p := _problem(item, v, f"{where}[{i}]"))), None)
    if origin is dict:
        return None if isinstance(value, dict) else f"{where} is a {type(value).__name__}, not a dict"
    if expected is float:
        expected = int | float
    if isinstance(value, bool) and expected is int:
        return f"{where} is a bool, not an int"
    return None if isinstance(value, expected) else f"{where} is a {type(value).__name__}, not {expected}"


def _typeddict_problem(expected: Any, value: Any, where: str) -> str | None:
    if not isinstance(value, Mapping):
        return f"{where} is a {type(value).__name__}, not a {expected.__name__}"
    keys = set(value)
    missing = expected.__required_keys__ - keys
    extra = keys - expected.__required_keys__ - expected.__optional_keys__
    if missing or extra:
        return f"{where} ({expected.__name__}) lacks {sorted(missing)}, has extra {sorted(extra)}"
    hints = _hints(expected)
    return next((p for k in value if (p := _problem(_unwrap(hints[k]), value[k], f"{where}.{k}"))), None)


def _unwrap(hint: Any) -> Any:
    """NotRequired[X] -> X (get_type_hints keeps the wrapper on Python 3.11)."""
    return get_args(hint)[0] if get_origin(hint) is typing.NotRequired else hint
