"""Screenshot and job ids can be typed on a command line: none starts with `-`."""

from __future__ import annotations

import argparse

from kronii.capture.core.ids import new_id


def test_ids_never_start_with_a_dash_so_argparse_takes_them_as_arguments() -> None:
    ids = [new_id(12) for _ in range(5000)]  # a dash leads about 1 in 64 raw tokens
    assert not [value for value in ids if value.startswith("-")]
    parser = argparse.ArgumentParser()
    parser.add_argument("id")
    assert all(parser.parse_args([value]).id == value for value in ids[:200])
    assert len(set(ids)) == len(ids)
