"""Printing for the cashier: one `Document` (pure, `document.py`) rendered to ESC/POS bytes for a till's
thermal printer (`escpos.py`) or to a PDF (`pdf.py`); `halls.cashier.services.printing` chooses and audits."""
