"""Moved to :mod:`mmacts.core.records` (issue 25: the result record is part of the ground-floor contract).

This name stays only for ``mmacts/report/cli.py`` and branches written before the move; delete it once they
import :mod:`mmacts.core.records`.
"""

from mmacts.core.records import (  # noqa: F401
    COLUMNS,
    RECORD_KEY,
    RecordsError,
    append_jsonl,
    empty_record,
    latest_by_case,
    read_jsonl,
    read_records,
    repair_tail,
)
