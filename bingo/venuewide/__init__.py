"""What spans bingo's wings, composed in one place: the venue's setup page and API (ball sets, rooms and
their devices and screens, series, casino tables), the staff pages' URL map, the session minutes
(`records`) and the inspector's pages and PDFs. It reads each wing through that wing's read model."""
