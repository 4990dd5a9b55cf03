"""Personal values the checked catalogues do not cover, for the generated corpus (fixed seed): vehicle
identification numbers (ISO 3779 with the North American check digit, and look-alikes with a wrong one), GPS
coordinates, MAC addresses in every common notation, e-mail addresses with non-ASCII (IDN) parts, and licence
plates of several countries, each in a sentence of the language that writes it."""

from __future__ import annotations

import random
import string
from collections.abc import Iterable

from tests.unit.redaction.generated_samples import Label, Sample

SEED = 32_2026
VIN_CHARS = "0123456789ABCDEFGHJKLMNPRSTUVWXYZ"  # ISO 3779: no I, O, Q
VIN_WEIGHTS = (8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2)
VIN_VALUES = {**{str(d): d for d in range(10)}, **dict(zip("ABCDEFGH", range(1, 9), strict=True))}
VIN_VALUES |= {**dict(zip("JKLMN", range(1, 6), strict=True)), "P": 7, "R": 9}
VIN_VALUES |= dict(zip("STUVWXYZ", range(2, 10), strict=True))
VIN_CONTEXTS = ("VIN: {value}", "Fahrgestellnummer {value}", "numéro VIN {value}", "车架号 {value}")


def _one(group: str, template: str, value: str, family: str, kind: str, *, find: bool = True) -> Sample:
    before, _, after = template.partition("{value}")
    label = Label(len(before), len(before) + len(value), family, f"{group}:{kind}", find)
    return Sample(group, before + value + after, (label,))


def vin_check(vin: str) -> str:
    total = sum(VIN_VALUES[char] * weight for char, weight in zip(vin, VIN_WEIGHTS, strict=True))
    return "X" if total % 11 == 10 else str(total % 11)


def _vins(rng: random.Random) -> Iterable[Sample]:
    for index in range(8):
        body = [rng.choice(VIN_CHARS) for _ in range(17)]
        body[8] = vin_check("".join(body))
        vin = "".join(body)
        template = VIN_CONTEXTS[index % len(VIN_CONTEXTS)]
        yield _one("misc", template, vin, "VEHICLE_ID", "VIN valid")
        wrong = vin[:8] + rng.choice([c for c in "0123456789X" if c != vin[8]]) + vin[9:]
        yield _one("misc", template, wrong, "VEHICLE_ID", "VIN invalid", find=False)


CITIES = ((52.52, 13.405), (48.8566, 2.3522), (35.6762, 139.6503), (-33.8688, 151.2093), (40.7128, -74.006))


def _dms(value: float, positive: str, negative: str) -> str:
    hemisphere = positive if value >= 0 else negative
    value = abs(value)
    degrees, minutes = int(value), (abs(value) - int(value)) * 60
    return f"{degrees}°{int(minutes)}'{(minutes - int(minutes)) * 60:.1f}\"{hemisphere}"


def _gps(rng: random.Random) -> Iterable[Sample]:
    for index, (lat, lon) in enumerate(CITIES):
        lat, lon = lat + rng.uniform(-0.05, 0.05), lon + rng.uniform(-0.05, 0.05)
        forms = (
            ("I'm at {value}, come pick me up", f"{lat:.6f}, {lon:.6f}", "decimal"),
            ("location: {value}", f"{_dms(lat, 'N', 'S')} {_dms(lon, 'E', 'W')}", "degrees minutes seconds"),
            ("https://www.google.com/maps?q={value}", f"{lat:.5f},{lon:.5f}", "maps URL"),
            ("geo:{value}", f"{lat:.4f},{lon:.4f}", "geo URI"),
        )
        template, value, kind = forms[index % len(forms)]
        yield _one("misc", template, value, "GPS_COORDINATES", kind)
        yield _one("misc", "GPS {value}", f"{lat:.6f} {lon:.6f}", "GPS_COORDINATES", "decimal, space")


def _macs(rng: random.Random) -> Iterable[Sample]:
    forms = (
        (
            "ether {value} brd ff:ff:ff:ff:ff:ff",
            lambda h: ":".join(h[i : i + 2] for i in range(0, 12, 2)),
            "colons",
        ),
        (
            "Physical Address. . . : {value}",
            lambda h: "-".join(h[i : i + 2] for i in range(0, 12, 2)).upper(),
            "hyphens",
        ),
        (
            "{value}    DYNAMIC     Gi1/0/12",
            lambda h: ".".join(h[i : i + 4] for i in range(0, 12, 4)),
            "Cisco dots",
        ),
        ("wifi mac address {value}", lambda h: h.upper(), "bare"),
    )
    for template, shape, kind in forms:
        for _ in range(2):
            hexes = "".join(rng.choice("0123456789abcdef") for _ in range(12))
            yield _one("misc", template, shape(hexes), "MAC_ADDRESS", kind)


IDN_EMAILS = (
    ("schreib an {value}", "jörg.weißmüller@bücherstube.de", "non-ASCII local part and domain"),
    ("邮箱：{value}", "李雷@邮件.中国", "CJK"),  # noqa: RUF001  (the colon Chinese is written with)
    ("почта: {value}", "иван.петров@почта.рф", "Cyrillic"),
    ("escríbeme a {value}", "josé.peña@correo-seguro.es", "non-ASCII local part"),
    ("メール {value} まで", "さとう@メール.jp", "Japanese"),
    ("email: {value}", "θανάσης@ταχυδρομείο.ελ", "Greek"),
)


def _emails() -> Iterable[Sample]:
    for template, value, kind in IDN_EMAILS:
        yield _one("misc", template, value, "EMAIL", f"IDN {kind}")


def _plate(rng: random.Random, shape: str) -> str:
    """A plate from a shape: A a letter, 9 a digit, anything else itself."""
    return "".join(
        rng.choice(string.ascii_uppercase) if c == "A" else rng.choice(string.digits) if c == "9" else c
        for c in shape
    )


PLATES = (
    ("Kennzeichen {value}", "B-AA 9999", "DE"),
    ("immatriculation : {value}", "AA-999-AA", "FR"),
    ("reg plate {value}", "AA99 AAA", "GB"),
    ("licence plate {value}", "AAA-9999", "US"),
    ("targa {value}", "AA 999AA", "IT"),
    ("matrícula {value}", "9999 AAA", "ES"),
    ("vehicle no. {value}", "KA 99 AA 9999", "IN"),
    ("车牌 {value}", "粤B·99999", "CN"),
)


def _plates(rng: random.Random) -> Iterable[Sample]:
    for template, shape, country in PLATES:
        yield _one("misc", template, _plate(rng, shape), "LICENCE_PLATE", country)


def misc_samples() -> Iterable[Sample]:
    rng = random.Random(f"{SEED}/misc")
    yield from _vins(rng)
    yield from _gps(rng)
    yield from _macs(rng)
    yield from _emails()
    yield from _plates(rng)
