"""How Spanish pages write dates and times: one format each, everywhere (templates use the names, e.g.
``|date:"SHORT_DATETIME_FORMAT"``; halls/format.js writes the same in the JavaScript)."""

DATE_FORMAT = "d/m/Y"
SHORT_DATE_FORMAT = "d/m/Y"
DATETIME_FORMAT = "d/m/Y H:i:s"
SHORT_DATETIME_FORMAT = "d/m/Y H:i:s"
TIME_FORMAT = "H:i:s"
YEAR_MONTH_FORMAT = "m/Y"
