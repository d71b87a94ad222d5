"""Records -> a pandas DataFrame with every report column, in a fixed order and dtype."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from mmacts.core.records import COLUMNS

_NUMERIC = ("mismatches", "max_abs_err", "max_ulp_err", "compile_s", "run_s", "kernel_us", "attempts")


def to_frame(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """Build the results table; unknown keys are dropped, missing columns are empty."""
    df = pd.DataFrame(list(records))
    for col in COLUMNS:
        if col not in df.columns:
            df[col] = None
    df = df[list(COLUMNS)]
    for col in _NUMERIC:
        df[col] = pd.to_numeric(df[col], errors="coerce")
    for col in COLUMNS:
        if col not in _NUMERIC:
            df[col] = df[col].astype("string")
    return df.sort_values(["suite", "case_id"], kind="stable").reset_index(drop=True)


def spec_tables(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (case, spec reference) with the table (``T54``) or section (``S9.7...``) it names."""
    rows = df[["case_id", "status", "spec_rows"]].copy()
    rows["ref"] = rows["spec_rows"].fillna("").str.split()
    # explode repeats index labels; some pandas versions refuse to align on them, so renumber.
    rows = rows.explode("ref").dropna(subset=["ref"]).reset_index(drop=True)
    rows = rows[rows["ref"] != ""].reset_index(drop=True)
    rows["table"] = rows["ref"].str.replace(r"^(T\d+)\..*$", r"\1", regex=True)
    rows["table"] = rows["table"].where(rows["table"].str.startswith("T"), "prose (S...)")
    return rows
