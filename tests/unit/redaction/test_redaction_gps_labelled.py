"""A latitude and a longitude each written after its label (JSON keys, query parameters, YAML, prose), in
either order: both values are masked and the labels stay; numbers that are no place stay."""

from __future__ import annotations

import pytest
from kronii.redaction.detectors import GpsDetector

from tests.unit.redaction.redaction_support import detect

DETECTOR = GpsDetector()


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ('{"lat": 52.520008, "lon": 13.404954}', ["52.520008", "13.404954"]),
        ('"location": {"lat": 40.7128, "lng": -74.0060}', ["40.7128", "-74.0060"]),
        ("GET /nearby?lat=52.5200&lon=13.4050 HTTP/1.1", ["52.5200", "13.4050"]),
        ("Lat 52.5200, Lon 13.4050", ["52.5200", "13.4050"]),
        ("latitude: -33.8688\nlongitude: 151.2093", ["-33.8688", "151.2093"]),
        ('{"longitude": 2.2945, "latitude": 48.8584}', ["2.2945", "48.8584"]),
    ],
)
def test_a_labelled_latitude_and_longitude_are_both_masked_and_their_labels_stay(
    text: str, values: list[str]
) -> None:
    assert detect(DETECTOR, text) == [("GPS_COORDINATES", value) for value in values]


@pytest.mark.parametrize(
    "text",
    [
        '{"lat": 152.52, "lon": 13.40}',  # no latitude above 90
        '{"lat": 52.52}',  # a latitude alone
        "latency 12.345 ms, long 12.345 s",  # not a latitude's label
        '{"lat": 0.12, "lon": 0.34}',  # both near zero: an offset, not a place
        '{"lat": 52.52, "note": "' + "x" * 80 + '", "lon": 13.40}',  # too far apart to be one place
    ],
)
def test_labelled_numbers_that_are_no_place_stay(text: str) -> None:
    assert detect(DETECTOR, text) == []
