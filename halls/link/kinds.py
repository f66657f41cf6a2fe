"""Every kind of message on the link: one list, as halls.eventtypes is for events."""

from enum import StrEnum


class LinkKind(StrEnum):
    # venue -> central (the outbox)
    # a venue's link process started: {"software": version, "started_at": ISO time} (recorded on VenueLink)
    HELLO = "link.hello"
    # interconnected bingo (bingo.network.interconnected): a member hall's round game at its close of sales
    # {prize, round, game, number, sales, to_meter, to_reserve, cards_sold, sold: [{series, ranges}]}
    IB_CONTRIBUTION = "ib.contribution"
    # ... and at its end {prize, round, game, void, ordinal (null: no Bingo), cards: ["A-0007", ...]}
    IB_RESULT = "ib.result"
    # venue -> the gaming authority (the outbox's authority destination, halls.link.transport.AuthoritySender)
    # a person's self-exclusion recorded (or extended) at the venue (halls.door.services.admission):
    # {"self_exclusion": id, "venue": {"licence", "name"}, "since", "until", "recorded_at",
    #  "personal": {"document": {"kind", "number", "country"}}} ("personal" erased once acknowledged)
    SELF_EXCLUSION = "door.self_exclusion"
    # wide-area pools (jackpots.widearea), venue -> central: a batch of the members' contributions to the
    # pool's wide-area levels, each level's exact sums of the venue's rows (from, through]:
    # {"pool": central code, "from": id, "through": id, "levels": {name: {count, bet, to_meter, to_reserve,
    #  house}}}
    WA_CONTRIBUTIONS = "wa.contributions"
    # a member's hit on a wide-area level: {"pool", "level", "key": the venue's, unique, "source", "at"}
    WA_HIT = "wa.hit"
    # the venue's totals forwarded so far, to reconcile with the central's (after the line returns):
    # {"pool", "through", "levels": {name: sums}}
    WA_METERS = "wa.meters"
    # central -> venue (streams)
    # a message for a venue's operator (credential rotated, link paused):
    # {"text": str, "level": "info" | "warning"} (stored in LinkNotice, listed by `manage.py link_notices`)
    NOTICE = "link.notice"
    # wide-area pools, on "network.<code>": a pool's levels and settings {"pool", "levels": [{"level",
    #  "amount"}], "at", "offline_after_seconds", "offline_action", "venues": [licence]} (when changed,
    #  at least every HALL_WIDE_AREA_HEARTBEAT_SECONDS)
    WA_LEVELS = "wa.levels"
    # a hit decided {"pool", "level", "venue": licence, "key", "outcome", "amount", "levels": [...]}
    WA_DECISION = "wa.decision"
    # a venue's meters reconciled {"pool", "venue": licence, "levels": central's sums, "differences": [...]}
    WA_RECONCILED = "wa.reconciled"
    # interconnected bingo, on "network.<code>": a round opened {prize, name, round, percent,
    # reserve_percent, max_ball, closes_at, halls}
    IB_ROUND_OPENED = "ib.round_opened"
    # a round decided {prize, round, rule, ordinal, pool, share, remainder, shares: [{id, hall, card,
    # amount}], missing: [hall], void: [hall]}
    IB_DECISION = "ib.decision"
    # the prize's meter {prize, name, amount, max_ball, at} (throttled; after every decision)
    IB_METER = "ib.meter"
    # simultaneous bingo (bingo.network.simultaneous), venue -> central:
    # {"game": code, "operation": sale id, "returned": bool, "first", "last", "cards", "amount": "0.00"}
    SB_SALE = "simultaneous.sale"
    # {"game": code, "claim": claim id, "kind": "line"|"bingo", "serial", "ordinal"}: verified in the hall
    SB_CLAIM = "simultaneous.claim"
    # {"game", "ordinal"}: the hall asked "¿alguna línea más? ¿algún bingo más?" after ball `ordinal` and has
    # no more claims bound to it (TB-44, S14): once every hall with cards in play said so, the window closes
    SB_NO_MORE_CLAIMS = "simultaneous.no_more_claims"
    # {"game", "cards", "amount", "refunded": [[first, last], ...]}: the hall's count of its cards in play as
    # it starts to play (after refunding the sales the central never counted), for the central to compare
    SB_RECONCILED = "simultaneous.reconciled"
    # simultaneous bingo, central -> venue (stream "network.<code>"):
    # {"game", "hall": licence, "seed", "generator", "rederived", "strips", "first", "last", "faces": the
    #  digest of the run's cards (bingo.cardgen.faces_digest), "card_price",
    #  "deadline": ISO time, "line_percent", "bingo_percent", "hall_percent"}
    SB_ALLOCATED = "simultaneous.allocated"
    # {"game", "commitment"?: the draw's commitment (issue 28), SHA-256 of its seed, when committed}
    SB_SALES_OPENED = "simultaneous.sales_opened"
    # {"game", "halls": {licence: {"operations": [sale ids counted], "cards", "amount"}}, "cards_sold",
    #  "sales_total", "line_prize", "bingo_prize", "hall_prize", "draw"?: {"sales_digest", "cards"}}
    SB_SALES_CLOSED = "simultaneous.sales_closed"
    SB_BALL = "simultaneous.ball"  # {"game", "ordinal", "number"}
    # {"game", "prize": "line"|"bingo"|"hall", "scope": "network"|licence, "ordinal", "amount", "share",
    #  "remainder", "winners": [{"hall": licence, "claim": the venue's claim id, "serial", "amount"}]}
    SB_DECIDED = "simultaneous.decided"
    SB_GAME_CLOSED = "simultaneous.game_closed"  # {"game"}
    # {"game", "seed", "commitment"}: the draw's seed revealed after the game (issue 28)
    SB_DRAW_REVEALED = "simultaneous.draw_revealed"
