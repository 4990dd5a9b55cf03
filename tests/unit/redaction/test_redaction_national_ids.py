"""National identity numbers, each with its published validation rules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from kronii.redaction import Level, RedactionContext, RedactionEngine
from kronii.redaction.detectors import CheckedIdDetector, NationalIdDetector

from tests.unit.redaction.redaction_support import detect

DETECTOR = NationalIdDetector()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("SSN 123-45-6789.", ("US_SSN", "123-45-6789")),
        ("ssn: 219099999", ("US_SSN", "219099999")),
        ("Social Security Number 536 22 1234", ("US_SSN", "536 22 1234")),
        ("NI number QQ 12 34 56 C", ("UK_NINO", "QQ 12 34 56 C")),
        ("nino=AB123456C", ("UK_NINO", "AB123456C")),
        ("BSN: 111222333", ("NL_BSN", "111222333")),
        ("burgerservicenummer 1234.56.782", ("NL_BSN", "1234.56.782")),
        ("DNI 12345678Z", ("ES_DNI", "12345678Z")),
        ("NIE X1234567L", ("ES_DNI", "X1234567L")),
        ("HETU 131052-308T", ("FI_HETU", "131052-308T")),
        ("henkilötunnus 010594Y9032", ("FI_HETU", "010594Y9032")),
        ("codice fiscale RSSMRA85T10A562S", ("IT_FISCAL_CODE", "RSSMRA85T10A562S")),
    ],
)
def test_valid_ids(text: str, expected: tuple[str, str]) -> None:
    assert detect(DETECTOR, text) == [expected]


@pytest.mark.parametrize(
    "text",
    [
        "000-12-3456",  # area 000
        "666-12-3456",  # area 666
        "912-12-3456",  # area 9xx
        "123-00-4567",  # group 00
        "123-45-0000",  # serial 0000
        "part 123-45-6789-01",  # a longer code
        "219099999",  # nine digits without a name
        "DQ123456C",  # D is not a NINO prefix letter
        "GB123456A",  # GB is excluded
        "BSN: 111222334",  # fails the 11-proof
        "12345678A",  # DNI letter wrong (Z)
        "131052-308U",  # HETU check character wrong
        "311352-308T",  # no 31st of the 13th month
        "RSSMRA85T10A562T",  # codice fiscale check wrong
    ],
)
def test_invalid_ids(text: str) -> None:
    assert detect(DETECTOR, text) == []


# Ids with check digits from other countries (detectors/checked_ids.py). Each valid number below was built to
# pass its published check; each invalid one is the same number with the last digit changed.
CHECKED = CheckedIdDetector()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Cliente: Ana Souza, CPF 113.586.606-62, Rio", ("BR_CPF", "113.586.606-62")),
        ("nota fiscal emitida para 511.708.397-03", ("BR_CPF", "511.708.397-03")),
        ('{"cpf": "29734077538", "nome": "Ana"}', ("BR_CPF", "29734077538")),
        ("Fornecedor: Acme Ltda, CNPJ 35.201.160/4209-80", ("BR_CNPJ", "35.201.160/4209-80")),
        ("cnpj=44954348719350", ("BR_CNPJ", "44954348719350")),
        ("Aadhaar No.: 4696 5175 0750", ("IN_AADHAAR", "4696 5175 0750")),
        ("KYC done with 9271-5903-0626 yesterday", ("IN_AADHAAR", "9271-5903-0626")),
        ("aadhaar_number=619156949366", ("IN_AADHAAR", "619156949366")),
        ("N° de sécurité sociale : 1 96 10 84 163 186 90", ("FR_NIR", "1 96 10 84 163 186 90")),
        ("NIR 169079435094858", ("FR_NIR", "169079435094858")),
        ("assuré né en Corse, NIR 1 93 01 2A 045 123 19", ("FR_NIR", "1 93 01 2A 045 123 19")),
        ("Steuer-ID: 38436392059", ("DE_STEUER_ID", "38436392059")),
        ("Ihre Identifikationsnummer (IdNr) lautet 56 130 812 941", ("DE_STEUER_ID", "56 130 812 941")),
        ("PESEL: 89071706778", ("PL_PESEL", "89071706778")),
        ("SIN: 347 067 134", ("CA_SIN", "347 067 134")),
        ("Social Insurance Number 589-943-729 on file", ("CA_SIN", "589-943-729")),
        ("Your TFN is 223 645 295", ("AU_TFN", "223 645 295")),
        ("tax file number: 433108162", ("AU_TFN", "433108162")),
    ],
)
def test_checked_ids_valid(text: str, expected: tuple[str, str]) -> None:
    assert detect(CHECKED, text) == [expected]


@pytest.mark.parametrize(
    "text",
    [
        "Cliente: Ana Souza, CPF 113.586.606-63, Rio",  # second CPF check digit wrong
        "CPF 111.111.111-11",  # eleven equal digits pass the sums but are invalid
        "order 29734077538 shipped",  # a valid CPF as a bare run, but nothing names it
        "Fornecedor: Acme Ltda, CNPJ 35.201.160/4209-81",
        "Aadhaar No.: 4696 5175 0751",  # Verhoeff check fails
        "Aadhaar 1234 5678 9012",  # never starts with 1
        "card 4111 1113 2437 0017 charged",  # grouped 4-4-4 inside a longer number
        "N° de sécurité sociale : 1 96 10 84 163 186 91",  # key wrong
        "NIR 1 93 01 2B 045 123 19",  # the 2A key on a 2B department
        "Steuer-ID: 38436392058",  # check digit wrong
        "Steuer-ID: 12345678903",  # no digit repeated: breaks the frequency rule
        "invoice 38436392059 paid",  # valid Steuer-ID digits without a name
        "PESEL: 89071706779",
        "PESEL: 89133106778",  # 13th month
        "SIN: 347 067 135",
        "call 347 067 134 tomorrow",  # Luhn-valid 3-3-3 without a name
        "Your TFN is 223 645 296",
        "ref 223 645 295",  # TFN-valid digits without a name
    ],
)
def test_checked_ids_invalid(text: str) -> None:
    assert detect(CHECKED, text) == []


def test_checked_ids_through_the_engine() -> None:
    text = "Cadastro: CPF 113.586.606-62, Aadhaar 4696 5175 0750, Steuer-ID 38436392059"
    result = RedactionEngine().redact(text, context=RedactionContext.random())
    assert result.text == "Cadastro: CPF [BR_CPF_1], Aadhaar [IN_AADHAAR_1], Steuer-ID [DE_STEUER_ID_1]"
    assert result.level is Level.AMBER


def test_checked_ids_under_a_named_column() -> None:
    # A table names the id once, in its header; rows under other columns stay.
    table = "nome;cpf;pedido\nAna;29734077538;71802687475\nBruno;11358660662;36324915778\n"
    assert detect(CHECKED, table) == [("BR_CPF", "29734077538"), ("BR_CPF", "11358660662")]


def test_checked_ids_table_without_the_name_stays() -> None:
    assert detect(CHECKED, "nome;pedido\nAna;29734077538\nBruno;11358660662\n") == []


def test_kronii_redact_masks_ids_passport_mrz_birth_date_and_mac_as_a_whole_process() -> None:
    values = (
        "113.586.606-62",
        "4696 5175 0750",
        "1990-02-28",
        "C01X00T47",
        "3c:22:fb:9a:41:0e",
        "L898902C36",
    )
    text = (
        "Cliente CPF 113.586.606-62, Aadhaar 4696 5175 0750, DOB 1990-02-28\n"
        "passport no: C01X00T47 seen from wlan0 3c:22:fb:9a:41:0e\n"
        "P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<\n"
        "L898902C36UTO7408122F1204159ZE184226B<<<<<10\n"
        "invoice 2024-05-17, CPF 113.586.606-63 rejected\n"
        # Ordinary text, so that the masked share stays below the policy's red threshold (the MRZ is long).
        "The onboarding checklist was reviewed by the support team on Monday; the customer confirmed the\n"
        "shipping preferences, the newsletter opt-out and the billing cycle, and asked for a paper invoice.\n"
    )
    kronii = str(Path(sys.executable).parent / "kronii")
    result = subprocess.run(
        [kronii, "redact"], input=text, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 10  # findings masked
    assert not [value for value in values if value in result.stdout]
    for placeholder in (
        "[BR_CPF_1]",
        "[IN_AADHAAR_1]",
        "[DATE_OF_BIRTH_1]",
        "[PASSPORT_1]",
        "[MAC_ADDRESS_1]",
        "[MRZ_1]",
    ):
        assert placeholder in result.stdout
    assert (
        "invoice 2024-05-17, CPF 113.586.606-63 rejected" in result.stdout
    )  # wrong check digit, no birth word


def test_an_id_written_with_and_without_separators_gets_one_placeholder() -> None:
    from kronii.redaction import RedactionEngine

    out = RedactionEngine().redact("CPF 113.586.606-62 again as CPF 11358660662").text
    assert out.count("[BR_CPF_1]") == 2, out
