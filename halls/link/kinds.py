"""Every kind of message on the link: one list, as halls.eventtypes is for events."""

from enum import StrEnum


class LinkKind(StrEnum):
    # venue -> central (the outbox)
    # a venue's link process started: {"software": version, "started_at": ISO time} (recorded on VenueLink)
    HELLO = "link.hello"
    # central -> venue (streams)
    # a message for a venue's operator (credential rotated, link paused):
    # {"text": str, "level": "info" | "warning"} (stored in LinkNotice, listed by `manage.py link_notices`)
    NOTICE = "link.notice"
    # simultaneous bingo (bingo.simultaneous), venue -> central:
    # {"game": code, "operation": sale id, "returned": bool, "first", "last", "cards", "amount": "0.00"}
    SB_SALE = "simultaneous.sale"
    # {"game": code, "claim": claim id, "kind": "line"|"bingo", "serial", "ordinal"}: verified in the hall
    SB_CLAIM = "simultaneous.claim"
    # simultaneous bingo, central -> venue (stream "network.<code>"):
    # {"game", "hall": licence, "seed", "generator", "rederived", "strips", "first", "last", "card_price",
    #  "deadline": ISO time, "line_percent", "bingo_percent", "hall_percent"}
    SB_ALLOCATED = "simultaneous.allocated"
    SB_SALES_OPENED = "simultaneous.sales_opened"  # {"game"}
    # {"game", "halls": {licence: {"operations": [sale ids counted], "cards", "amount"}}, "cards_sold",
    #  "sales_total", "line_prize", "bingo_prize", "hall_prize"}
    SB_SALES_CLOSED = "simultaneous.sales_closed"
    SB_BALL = "simultaneous.ball"  # {"game", "ordinal", "number"}
    # {"game", "prize": "line"|"bingo"|"hall", "scope": "network"|licence, "ordinal", "amount", "share",
    #  "remainder", "winners": [{"hall": licence, "claim": the venue's claim id, "serial", "amount"}]}
    SB_DECIDED = "simultaneous.decided"
    SB_GAME_CLOSED = "simultaneous.game_closed"  # {"game"}
