"""Detectors: one module per family of sensitive values. Each is a small class with a `name` and a
`detect(scan)` that yields candidate spans; the engine resolves overlaps, masks and grades them.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._base import Candidate, CandidatePart, Detector, ScanText, line_local_findings, may_occur
from .aws import AwsSecretKeyDetector
from .birth_dates import BirthDateDetector
from .catalogue_ids import CatalogueIdDetector
from .checked_ids import CheckedIdDetector
from .command_secrets import CommandSecretDetector
from .credential_files import CredentialFileDetector
from .email import EmailDetector
from .encoded_values import EncodedValueDetector
from .entropy import EntropyDetector
from .gps import GpsDetector
from .home_paths import HomePathDetector
from .iban import IbanDetector
from .ip_address import IpAddressDetector
from .jwt import JwtDetector
from .keyword_secrets import KeywordSecretDetector
from .mac_address import AnnouncedMacDetector, MacAddressDetector
from .national_ids import NationalIdDetector
from .passports import PassportDetector
from .password_context import ContextualPasswordDetector
from .payment_card import PaymentCardDetector
from .person_names import PersonNameDetector
from .phone import PhoneDetector
from .policy_terms import CustomPatternDetector, DenyTermDetector
from .postal_address import PostalAddressDetector
from .private_keys import PrivateKeyDetector
from .structured_ids import StructuredIdDetector
from .url_credentials import UrlCredentialDetector
from .vehicles import LicencePlateDetector, VinDetector
from .vendor_tokens import VendorTokenDetector

__all__ = [
    "AnnouncedMacDetector",
    "AwsSecretKeyDetector",
    "BirthDateDetector",
    "Candidate",
    "CandidatePart",
    "CatalogueIdDetector",
    "CheckedIdDetector",
    "CommandSecretDetector",
    "ContextualPasswordDetector",
    "CredentialFileDetector",
    "CustomPatternDetector",
    "DenyTermDetector",
    "Detector",
    "EmailDetector",
    "EncodedValueDetector",
    "EntropyDetector",
    "GpsDetector",
    "HomePathDetector",
    "IbanDetector",
    "IpAddressDetector",
    "JwtDetector",
    "KeywordSecretDetector",
    "LicencePlateDetector",
    "MacAddressDetector",
    "NationalIdDetector",
    "PassportDetector",
    "PaymentCardDetector",
    "PersonNameDetector",
    "PhoneDetector",
    "PostalAddressDetector",
    "PrivateKeyDetector",
    "ScanText",
    "StructuredIdDetector",
    "UrlCredentialDetector",
    "VendorTokenDetector",
    "VinDetector",
    "built_in_detectors",
    "line_local_findings",
    "may_occur",
]


def built_in_detectors(*, phone_regions: Sequence[str] = ("US", "GB")) -> tuple[Detector, ...]:
    """Every built-in detector, secrets first."""
    return (
        PrivateKeyDetector(),
        VendorTokenDetector(),
        AwsSecretKeyDetector(),
        JwtDetector(),
        UrlCredentialDetector(),
        KeywordSecretDetector(),
        CommandSecretDetector(),
        CredentialFileDetector(),
        ContextualPasswordDetector(),
        EntropyDetector(),
        EmailDetector(),
        PhoneDetector(phone_regions),
        PostalAddressDetector(),
        PersonNameDetector(),
        PaymentCardDetector(),
        IbanDetector(),
        NationalIdDetector(),
        CheckedIdDetector(),
        CatalogueIdDetector(),
        StructuredIdDetector(),
        PassportDetector(),
        BirthDateDetector(),
        MacAddressDetector(),
        AnnouncedMacDetector("ascii"),
        AnnouncedMacDetector("other"),
        GpsDetector(),
        VinDetector(),
        LicencePlateDetector("ascii"),
        LicencePlateDetector("other"),
        IpAddressDetector(),
        HomePathDetector(),
    )
