"""The network demo (`manage.py demo_network`): a central and two venue installations, each seeded here in
its own database, and what plays by itself in each (`tick`, the beat's ``demo.tasks.autoplay_network``).

At the central: the network "DEMO" of the two venues (one region, one operator: every contribution is
tagged with them), a link credential per venue, an interconnected prize (IB-01) whose rounds open by
themselves (its ``auto_rounds``: a fresh round whenever the newest has a hall's game), and one simultaneous
game (SB-01) after the other: created once both venues are online, cards allocated to both, sales open for
`sales_seconds`, then closed network-wide by the product's beat, the draw started here, the claims decided
by the product.

At a venue: its hall (demo.hall) whose "Sala Principal" plays the prize (it starts playing by itself once
the link has brought the prize's first round, so its first game already contributes), and a room "Sala
Red" where the hall places each network game it is allocated, sells a run of its cards, refunds what the
central did not count and claims its winning cards, as a cashier and players would.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from bingo.network.interconnected.models import KnownRound, NetworkPrize, RoomMembership
from bingo.network.interconnected.services import prizes
from bingo.network.interconnected.services import venue as network_venue
from bingo.network.simultaneous.models import HallGame, HallGameState, NetworkGame, NetworkGameState
from bingo.network.simultaneous.services import central as sb_central
from bingo.network.simultaneous.services import venue as sb_venue
from bingo.traditional.models import Claim, SoldCard
from bingo.traditional.services import readmodels
from demo import conf
from demo import hall as demo_hall
from demo.actors import autoplay_actor, robot_shift
from demo.models import AutoplayRoom
from halls.errors import DomainError
from halls.link.services import credentials, presence
from halls.models import (
    GameSession,
    HallCategory,
    Jurisdiction,
    Network,
    Role,
    Room,
    Screen,
    StaffRole,
    Venue,
)
from halls.services import audit, regions, sessions

NETWORK_CODE = "DEMO"
NETWORK_NAME = "Red Demo Melilla"
REGION = ("ML", "Ciudad Autónoma de Melilla")
OPERATOR = ("Bingos Demo S.L.", "B00000000")
CENTRAL_STAFF = "operator"


@dataclass(frozen=True)
class VenueSpec:
    key: str  # the installation's short name: its database file, its process, its cookies
    name: str
    licence: str


VENUES = (
    VenueSpec("norte", "Bingo Demo Norte", "ML-DEMO-N001"),
    VenueSpec("sur", "Bingo Demo Sur", "ML-DEMO-S002"),
)

# The interconnected prize: 2 % of each member game's sales, won by a Bingo within 45 balls; a round waits
# five minutes for the halls' results (longer than a self-played game at 2 s a ball).
PRIZE_CODE = "BOTE-RED"
PRIZE_NAME = "Bote Red Demo"
PRIZE_PERCENT = Decimal("2")
PRIZE_MAX_BALL = 45
PRIZE_SEED = Decimal("100.00")
PRIZE_WAIT_SECONDS = 300
AUTHORISATION = "DEMO"
VENUE_PACE = Decimal("2")

# The simultaneous game: 1 € a card, 10 % to the network Line, 40 % to the network Bingo, 10 % to each
# hall's Bingo; each hall is allocated 20 strips (120 cards); a ball every 2 s.
NETWORK_ROOM = "Sala Red"
NETWORK_SCREEN = "Pantalla · Sala Red"
CARD_PRICE = Decimal("1.00")
PERCENTS = (Decimal("10"), Decimal("40"), Decimal("10"))
STRIPS_PER_HALL = 20
NETWORK_PACE = Decimal("2")
# Seconds of the results shown before the next game is created.
NEXT_GAME_PAUSE = timedelta(seconds=10)


def sales_seconds() -> float:
    """How long each network game is on sale (HALL_DEMO_NETWORK_SALES_SECONDS)."""
    return float(conf.NETWORK_SALES_SECONDS)


# --- the central ------------------------------------------------------------------------------------------


@dataclass
class CentralSeed:
    credentials: dict[str, str]  # username -> password (new at every start)
    # licence -> {"key", "secret"}: the venues' link credentials (shown once).
    links: dict[str, dict[str, str]] = field(default_factory=dict)


def seed_central() -> CentralSeed:
    """The central's venues (region, operator), the network, the operator, a link credential per venue
    (issued again at every start: the demo's databases are new), the prize and its first round."""
    actor = "demo"
    region = regions_region()
    operator_row = regions_operator()
    venues = []
    for spec in VENUES:
        with transaction.atomic():
            venue, created = Venue.objects.get_or_create(
                licence_number=spec.licence,
                defaults={
                    "name": spec.name,
                    "jurisdiction": Jurisdiction.ML,
                    "hall_category": HallCategory.FIRST,
                    "time_zone": "Africa/Ceuta",
                },
            )
            if created:
                data = {"name": venue.name, "jurisdiction": venue.jurisdiction}
                audit.record(venue_id=venue.pk, actor=actor, action="venue.created", obj=venue, data=data)
        venue = regions.assign_venue(venue=venue, actor=actor, region=region, operator=operator_row)
        venues.append(venue)
    network = _network()
    for venue in venues:
        regions.join_network(network=network, venue=venue, actor=actor)
    password = secrets.token_urlsafe(9)
    user, _ = get_user_model().objects.get_or_create(username=CENTRAL_STAFF)
    user.set_password(password)
    user.is_active = user.is_staff = user.is_superuser = True
    user.save()
    for venue in venues:
        with transaction.atomic():
            _, granted = StaffRole.objects.get_or_create(user=user, venue=venue, role=Role.OPERATOR)
            if granted:
                data = {"user": CENTRAL_STAFF, "role": Role.OPERATOR}
                audit.record(venue_id=venue.pk, actor=actor, action="staff_role.granted", obj=user, data=data)
    seeded = CentralSeed(credentials={CENTRAL_STAFF: password})
    for venue in venues:
        issued = credentials.issue(venue=venue, actor=actor)
        seeded.links[venue.licence_number] = {"key": issued.key, "secret": issued.secret}
    prize = NetworkPrize.objects.filter(code=PRIZE_CODE).first()
    if prize is None:
        prize = prizes.create_prize(
            network=network,
            code=PRIZE_CODE,
            name=PRIZE_NAME,
            percent=PRIZE_PERCENT,
            max_ball=PRIZE_MAX_BALL,
            seed=PRIZE_SEED,
            wait_seconds=PRIZE_WAIT_SECONDS,
            authorisation_ref=AUTHORISATION,
            halls=venues,
            actor=user,
            auto_rounds=True,  # its rounds open by themselves, the first one now
        )
    return seeded


def regions_region() -> Any:
    from halls.models import Region

    code, name = REGION
    return Region.objects.filter(code=code).first() or regions.create_region(
        code=code, name=name, jurisdiction=Jurisdiction.ML, actor="demo"
    )


def regions_operator() -> Any:
    from halls.models import Operator

    name, tax_id = OPERATOR
    return Operator.objects.filter(tax_id=tax_id).first() or regions.create_operator(
        name=name, tax_id=tax_id, actor="demo"
    )


def _network() -> Network:
    network, _ = Network.objects.get_or_create(
        code=NETWORK_CODE, defaults={"name": NETWORK_NAME, "jurisdiction": Jurisdiction.ML}
    )
    return network


def central_tick() -> list[str]:
    """One step of the central: the simultaneous game (the prize's rounds open by themselves)."""
    return [_simultaneous(autoplay_actor())]


def _online() -> list[str]:
    return [state.licence_number for state in presence.network_map() if state.state == "online"]


def _simultaneous(actor: User) -> str:
    network = Network.objects.get(code=NETWORK_CODE)
    game = NetworkGame.objects.filter(network=network).order_by("-pk").first()
    now = timezone.now()
    if game is not None and game.state == NetworkGameState.SALES_CLOSED and game.cards_sold:
        sb_central.start_draw(game=game, actor=actor)
        return f"started the draw of {game.code}"
    if game is not None and game.state in (NetworkGameState.ON_SALE, NetworkGameState.DRAWING):
        return "playing"  # the product's beat closes the sales; its tasks draw and decide
    closed = game is not None and game.state == NetworkGameState.CLOSED
    if closed and game is not None and now - (game.last_ball_at or now) < NEXT_GAME_PAUSE:
        return "showing the result"
    online = _online()
    if sorted(online) != sorted(spec.licence for spec in VENUES):
        return "waiting for the venues"
    # None yet, the last one over, or one that can never play (nothing sold in time, or left in set-up).
    number = (NetworkGame.objects.filter(network=network).count() or 0) + 1
    code = f"RED-{number:04d}"
    if NetworkGame.objects.filter(code=code).exists():
        code = f"RED-{number:04d}-{secrets.token_hex(2)}"
    made = sb_central.create_game(
        network=network,
        code=code,
        card_price=CARD_PRICE,
        line_percent=PERCENTS[0],
        bingo_percent=PERCENTS[1],
        hall_percent=PERCENTS[2],
        sales_deadline=now + timedelta(seconds=sales_seconds()),
        actor=actor,
        operation_id=f"demo-{code}",
        pace_seconds=NETWORK_PACE,
    )
    sb_central.allocate(game=made, strips=[(spec.licence, STRIPS_PER_HALL) for spec in VENUES], actor=actor)
    sb_central.open_sales(game=made, actor=actor)
    return f"created {made.code}"


# --- a venue ---------------------------------------------------------------------------------------------


@dataclass
class VenueSeed:
    hall: demo_hall.DemoHall
    network_screen: Screen


def seed_venue(spec: VenueSpec) -> VenueSeed:
    """The venue's hall (staff, rooms, screens, card series, prize programs), its network, the prize played
    in "Sala Principal", and "Sala Red" (with a screen and an open session) for the network games."""
    hall = demo_hall.seed_hall(name=spec.name, licence=spec.licence, self_playing=False, pace=VENUE_PACE)
    demo_hall.seed_bingo(hall)
    venue = hall.venue
    network = _network()
    regions.join_network(network=network, venue=venue, actor="demo")
    main = hall.rooms[demo_hall.AUTOPLAY_ROOM]
    if not RoomMembership.objects.filter(room=main, prize_code=PRIZE_CODE).exists():
        network_venue.join_room(room=main, network=network, prize_code=PRIZE_CODE, actor=hall.operator)
    with transaction.atomic():
        room, created = Room.objects.get_or_create(
            venue=venue, name=NETWORK_ROOM, defaults={"ball_pace_seconds": NETWORK_PACE}
        )
        if created:
            data = {"name": room.name, "autoplay": False, "pace_seconds": NETWORK_PACE}
            audit.record(venue_id=venue.pk, actor="demo", action="room.created", obj=room, data=data)
        screen = demo_hall._screen(room, NETWORK_SCREEN)
    demo_hall.seed_devices(room, demo_hall.BLOWER_ONLY, hall.operator)
    if not GameSession.objects.filter(room=room, closed_at__isnull=True).exists():
        sessions.open_session(
            room=room,
            actor=autoplay_actor(),
            blower_ok=True,
            reserve_ok=True,
            reader_ok=True,
            inspection_balls=list(range(1, 91)),
        )
    robot_shift(venue)
    hall.notes.append(f"network {NETWORK_CODE}: {demo_hall.AUTOPLAY_ROOM} plays the prize {PRIZE_NAME}")
    return VenueSeed(hall=hall, network_screen=screen)


def venue_tick() -> list[str]:
    """One step of a venue: start the self-playing room once the prize's round is known, and play each
    network game it was allocated."""
    done = []
    for membership in RoomMembership.objects.filter(prize_code=PRIZE_CODE, active=True):
        known = KnownRound.objects.filter(prize_code=PRIZE_CODE).exists()
        if known and not AutoplayRoom.objects.filter(room_id=membership.room_id).exists():
            AutoplayRoom.objects.get_or_create(room_id=membership.room_id)
            done.append("the prize's room plays")
    for hall_game in HallGame.objects.exclude(state=HallGameState.CLOSED).order_by("pk"):
        try:
            done.append(_play_network_game(hall_game))
        except DomainError as refusal:  # the central moved on meanwhile: the next tick sees where it is
            done.append(f"{hall_game.code}: {refusal.code}")
    return done


def _play_network_game(hall_game: HallGame) -> str:
    actor = autoplay_actor()
    now = timezone.now()
    if hall_game.state == HallGameState.ALLOCATED and hall_game.game_id is None:
        if hall_game.sales_deadline <= now:
            return f"{hall_game.code}: too late to place"
        room = Room.objects.get(venue_id=hall_game.venue_id, name=NETWORK_ROOM)
        sb_venue.place(hall_game=hall_game, room=room, actor=actor)
        return f"placed {hall_game.code}"
    if hall_game.state == HallGameState.SELLING:
        if SoldCard.objects.filter(game=hall_game.game).exists() or hall_game.sales_deadline <= now:
            return "selling"
        robot_shift(hall_game.venue)
        allocated = hall_game.last_serial - hall_game.first_serial + 1
        count = min(allocated, 24 + secrets.randbelow(48))
        sb_venue.sell(
            hall_game=hall_game,
            first=hall_game.first_serial,
            last=hall_game.first_serial + count - 1,
            actor=actor,
            idempotency_key=f"demo-sale-{hall_game.code}",
        )
        return f"sold {count} cards of {hall_game.code}"
    if hall_game.state == HallGameState.RECONCILING:
        robot_shift(hall_game.venue)
        sb_venue.refund_unconfirmed(hall_game=hall_game, actor=actor)
        return f"refunded the unconfirmed cards of {hall_game.code}"
    if hall_game.state == HallGameState.PLAYING and hall_game.game is not None:
        return _claim(hall_game, actor)
    return "waiting"


def _claim(hall_game: HallGame, actor: User) -> str:
    """Claim every winning card of the hall's game once, as its players would (the line only while the
    network Line is open)."""
    assert hall_game.game is not None
    found = readmodels.unclaimed_winners(hall_game.game)
    kinds = ["bingo"] if hall_game.line_won_at is not None else ["line", "bingo"]
    claimed = set(Claim.objects.filter(game=hall_game.game).values_list("kind", "serial"))
    filed = 0
    for kind in kinds:
        for row in found[kind]:
            serial = int(str(row["serial"]))
            if (kind, serial) in claimed:
                continue
            sb_venue.claim(
                hall_game=hall_game,
                kind=kind,
                serial=serial,
                actor=actor,
                idempotency_key=f"demo-{kind}-{serial}",
            )
            filed += 1
    return f"{hall_game.code}: {filed} claims" if filed else f"{hall_game.code}: drawing"


def tick() -> list[str]:
    """One step of this installation's part of the network demo (nothing unless HALL_DEMO_NETWORK)."""
    if not conf.NETWORK:
        return []
    if settings.HALL_ROLE == "central":
        return central_tick()
    return venue_tick()
