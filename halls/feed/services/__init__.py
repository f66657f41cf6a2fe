"""The installation's side of the feed (Django): emitting a fact's message (`emit`), when the feed is on and
how often the pools are reported (`facts`). The daily reports are halls.services.feed_days."""
