"""How English pages write dates and times: one format each, everywhere, unambiguous (ISO dates, a 24-hour
clock: a hall's records are read across countries). halls/format.js writes the same in the JavaScript."""

DATE_FORMAT = "Y-m-d"
SHORT_DATE_FORMAT = "Y-m-d"
DATETIME_FORMAT = "Y-m-d H:i:s"
SHORT_DATETIME_FORMAT = "Y-m-d H:i:s"
TIME_FORMAT = "H:i:s"
YEAR_MONTH_FORMAT = "Y-m"
