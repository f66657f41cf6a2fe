"""Every kind of message on the link: one list, as halls.eventtypes is for events."""

from enum import StrEnum


class LinkKind(StrEnum):
    # venue -> central (the outbox)
    HELLO = "link.hello"  # a venue's first message: its software version and clock (nothing else)
    # interconnected bingo (bingo.network): a member hall's round game at its close of sales
    # {prize, round, game, number, sales, to_meter, to_reserve, cards_sold, sold: [{series, ranges}]}
    IB_CONTRIBUTION = "ib.contribution"
    # ... and at its end {prize, round, game, void, ordinal (null: no Bingo), cards: ["A-0007", ...]}
    IB_RESULT = "ib.result"
    # central -> venue (streams)
    NOTICE = "link.notice"  # a message for a venue's operator (credential rotated, link paused)
    # interconnected bingo, on "network.<code>": a round opened {prize, name, round, percent,
    # reserve_percent, max_ball, closes_at, halls}
    IB_ROUND_OPENED = "ib.round_opened"
    # a round decided {prize, round, rule, ordinal, pool, share, remainder, shares: [{id, hall, card,
    # amount}], missing: [hall], void: [hall]}
    IB_DECISION = "ib.decision"
    # the prize's meter {prize, name, amount, max_ball, at} (throttled; after every decision)
    IB_METER = "ib.meter"
