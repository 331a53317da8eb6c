"""Where runs are kept: JSON Lines files (``jsonl``) and the SQL store (``sql``).

``JsonlLog`` writes one run to a file; ``SqlStore`` keeps every run (SQLite by
default, any SQLAlchemy URL) and gives each its ``SqlLog``. Both satisfy
``roost.ports.EventLog``. Nothing is imported here, so that using the JSON
Lines log does not load SQLAlchemy.
"""
