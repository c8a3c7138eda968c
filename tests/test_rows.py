"""The types of the record's rows (sieve/store/record/rows.py) say what the migrated schema holds."""

from __future__ import annotations

import types
import typing

import pytest

from sieve.store.record.db import expected_schema
from sieve.store.record.rows import Annotation, Run, Turn


@pytest.mark.parametrize("table, row", [("runs", Run), ("turns", Turn), ("annotations", Annotation)])
def test_a_row_type_names_every_column_of_its_table_and_no_other(table, row):
    columns = {name for name, _, _, _ in expected_schema()[table]}
    assert row.__required_keys__ | row.__optional_keys__ == columns


@pytest.mark.parametrize("table, row", [("runs", Run), ("turns", Turn), ("annotations", Annotation)])
def test_a_column_that_may_be_null_is_optional_in_its_row_type_and_only_such_a_column(table, row):
    hints = typing.get_type_hints(row)
    for name, _, not_null, primary_key in expected_schema()[table]:
        hint = hints[name]
        admits_none = isinstance(hint, types.UnionType) and type(None) in typing.get_args(hint)
        assert admits_none == (not not_null and not primary_key), name
