"""Gateway API durations from Go/Kubernetes-style input."""

import datetime

import pytest

from aim_core import to_gateway_duration
from aim_core.reconcile.durations import GATEWAY_DURATION_PATTERN, parse_duration


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("30s", "30s"),
        ("5m", "5m0s"),
        ("1h", "1h0m0s"),
        ("1h30m", "1h30m0s"),
        ("90s", "1m30s"),
        ("3600s", "1h0m0s"),
        ("1.5s", "1s500ms"),
        ("250ms", "250ms"),
        ("1500ms", "1s500ms"),
        ("0.5h", "30m0s"),
        ("2h0m0s", "2h0m0s"),  # already canonical: unchanged
        ("1h0m0.25s", "1h0m0s250ms"),
        ("1000000us", "1s"),
        ("0", "0s"),
        ("0s", "0s"),
        (" 10s ", "10s"),
        ("+10s", "10s"),
        (30, "30s"),
        (1.5, "1s500ms"),
        (0, "0s"),
        (86400, "24h0m0s"),
        (datetime.timedelta(minutes=3), "3m0s"),
    ],
)
def test_to_gateway_duration(given, expected):
    result = to_gateway_duration(given)
    assert result == expected
    assert GATEWAY_DURATION_PATTERN.match(result)
    # Feeding the result back in is stable.
    assert to_gateway_duration(result) == result


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("", "empty"),
        ("30", "number and a unit"),
        ("s", "number and a unit"),
        ("5 m", "number and a unit"),
        ("1d", "number and a unit"),
        ("1.2.3s", "number and a unit"),
        ("-5s", "negative"),
        (-1, "negative"),
        ("1500us", "millisecond"),
        ("1ns", "millisecond"),
        (0.0001, "millisecond"),
        ("100000h", "99999 hours"),
        (True, "bool"),
    ],
)
def test_invalid_durations_name_the_problem(given, message):
    with pytest.raises(ValueError, match=message):
        to_gateway_duration(given)


def test_parse_duration_reads_every_go_unit():
    assert parse_duration("1h1m1s1ms1us1ns") == 3_661_001_001_001
    assert parse_duration("2µs") == parse_duration("2us") == 2000
    assert parse_duration(".5s") == 500_000_000
