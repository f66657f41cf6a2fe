"""The regulator node's services: the feed's intake (feedwire), the portal's read models and writes."""
