"""Electronic bingo's REST doors, all under /api/electronic/ (bingo.electronic.urls): the terminals' device
API (terminal.py, 'Authorization: CashDevice <id>:<token>'), the operators' endpoints and the reports."""
