# ruff: noqa: RUF001  (letters and colons of other scripts are meant)
"""Postal addresses with a person's name or an address label, in European and Asian formats; addresses alone stay."""

from __future__ import annotations

import pytest
from kronii.redaction import RedactionEngine
from kronii.redaction.detectors import PostalAddressDetector

from tests.unit.redaction.redaction_support import detect

DETECTOR = PostalAddressDetector()


@pytest.mark.parametrize(
    ("before", "address"),
    [
        ("", "Max Mustermann\nMusterstraße 12\n10115 Berlin"),
        ("Versand an: ", "Erika Mustermann, Karl-Marx-Allee 90a, 10243 Berlin"),
        ("", "Herr Klaus Becker\nAm Markt 3\n80331 München"),
        ("", "Frau Anna Schmidt\nHauptstr. 5\nD-50667 Köln"),
        ("", "Jean Dupont\n12 rue de la Paix\n75002 Paris"),
        ("", "Mme Claire MARTIN, 8 avenue des Champs-Élysées, 75008 Paris"),
        ("", "M. Pierre Durand\n3 bis, boulevard Haussmann\n75009 PARIS"),
        ("", "Mr John Smith\n10 Downing Street\nLondon SW1A 2AA"),
        ("Deliver to: ", "Dr Emily Clarke, Flat 2, 14 Baker Street, Marylebone, London NW1 6XE"),
        ("Ship to: ", "Jane Doe, 123 Main St, Springfield, IL 62704"),
        ("", "Sarah Connor\n1600 Pennsylvania Ave NW\nWashington, DC 20500"),
        ("", "Priya Sharma\nFlat 4B, 12 MG Road\nBengaluru, Karnataka 560001"),
        ("", "Rahul Verma, 22 Nehru Nagar, New Delhi - 110001"),
        ("", "Anil Kumar\nH.No. 5-3-12, Gandhi Road\nHyderabad 500001"),
        ("", "Ana Souza\nAv. Paulista, 1578 - Bela Vista\nSão Paulo - SP, 01310-200"),
        ("", "Carlos Pereira\nRua das Flores, 45\nCEP 80010-010 Curitiba - PR"),
        ("", "山田 太郎\n〒100-0001 東京都千代田区千代田1-1"),
        ("お届け先\n", "山田太郎様\n〒100-0001 東京都千代田区千代田1-1"),
        # The name after the address, as Japanese letters often have it.
        ("お届け先\n", "〒150-0002 東京都渋谷区渋谷2-21-1\n佐藤 花子 様"),
    ],
)
def test_name_with_address_is_masked_from_name_to_city(before: str, address: str) -> None:
    text = f"{before}{address}\nThanks!"
    assert detect(DETECTOR, text) == [("POSTAL_ADDRESS", address)]


@pytest.mark.parametrize(
    "text",
    [
        "Musterstraße 12, 10115 Berlin",  # an address without a person: often a shop's or a company's
        "Our office: 12 rue de la Paix, 75002 Paris",
        "c Employer: Example Corp, 500 Oak Ave, Austin TX 78701",  # a company is no person
        "Max Mustermann",  # a name alone stays
        "Jane Doe\nSpringfield, IL 62704",  # no street
        "Kubernetes Pods\nRunning 12 containers, 10115 events",
        "Mr John Smith\n10 Downing Street\nLondon SW1A 2AX9",  # not a postcode
        "Priya Sharma\nFlat 4B, 12 MG Road\nBengaluru 060001",  # PINs start 1 to 8
        "Build Agent\n42 Pipeline Road\nrun 123456 finished",
        "お届け先\n〒150-0002 東京都渋谷区渋谷2-21-1",  # a Japanese word is no name
        "〒150-0002 東京都渋谷区渋谷2-21-1\nShibuya Hikarie",  # nor a building after the address
    ],
)
def test_lookalikes_stay(text: str) -> None:
    assert detect(DETECTOR, text) == []


def test_engine_masks_the_address_as_one_placeholder() -> None:
    text = "Please send the contract to\nJean Dupont\n12 rue de la Paix\n75002 Paris\nbefore Friday."
    result = RedactionEngine().redact(text)
    assert result.text == "Please send the contract to\n[POSTAL_ADDRESS_1]\nbefore Friday."


@pytest.mark.parametrize(
    "address",
    [
        "Giulia Bianchi\nVia Roma 12\n00184 Roma",
        "Pieter de Vries\nKalverstraat 1\n1012 AB Amsterdam",
        "Jan Kowalski, ul. Długa 5, 00-238 Warszawa",
        "Anna Svensson\nStorgatan 12\n111 22 Stockholm",
        "Lars Nielsen, Østergade 4, DK-1100 København",
        "Maria Ferreira\nRua Augusta 100\n1100-053 Lisboa",
        "Juan Pérez, Calle Mayor 5, 28013 Madrid",
        "Franz Huber, Mariahilfer Straße 10, 1060 Wien",
        "Petra Novák\nVáclavské náměstí 1\n110 00 Praha",
        "Matti Virtanen, Mannerheimintie 5, 00100 Helsinki",
    ],
)
def test_european_address_with_a_name_is_masked_from_name_to_city(address: str) -> None:
    assert detect(DETECTOR, f"{address}\nThanks!") == [("POSTAL_ADDRESS", address)]


@pytest.mark.parametrize(
    ("label", "address"),
    [
        ("Address: ", "Kalverstraat 1, 1012 AB Amsterdam"),
        ("Adresse : ", "12 rue de la Paix, 75002 Paris"),
        ("Anschrift: ", "Hauptstraße 5, 10115 Berlin"),
        ("Dirección: ", "Calle Mayor 5, 28013 Madrid"),
        ("Indirizzo: ", "Via Roma 12, 00184 Roma"),
        ("Адрес: ", "101000, г. Москва, ул. Тверская, д. 7, кв. 12"),
        ("地址：", "上海市浦东新区世纪大道100号"),
        ("收货地址：", "台北市信義區信義路五段7號"),
        ("주소: ", "서울특별시 강남구 테헤란로 152"),
        ("住所：", "東京都千代田区丸の内1-9-2"),
        ('  "shipping_address": "', "Storgatan 12, 111 22 Stockholm"),
        ("पता: ", "फ्लैट 302, गणेश अपार्टमेंट, पुणे 411038"),
        ("ঠিকানা: ", "১২/বি লেক রোড, কলকাতা ৭০০০২৯"),
        ("ที่อยู่: ", "99/12 ถนนสุขุมวิท แขวงคลองเตย เขตคลองเตย กรุงเทพฯ 10110"),
    ],
)
def test_address_after_an_address_label_is_masked(label: str, address: str) -> None:
    quote = '"' if label.endswith('"') else ""
    assert detect(DETECTOR, f"{label}{address}{quote}") == [("POSTAL_ADDRESS", address)]


@pytest.mark.parametrize(
    "text",
    [
        "IP address: 192.168.1.10",
        "Listen address: 0.0.0.0:8080",
        "MAC Address: 00:1a:2b:3c:4d:5e",
        "address: 0x7ffd5a3c",
        "Address: see the wiki",
        "Address: port 8080",
        "Server Version 1.2, 4000 Requests",
        "Our office: Via Roma 12, 00184 Roma",  # no person, no address label
        "Kalverstraat 1\n1012 AB Amsterdam",
        "Deployed to eu-west-1, 2024 Releases",
        # Found in real sources: code after an address key, a docstring, institutions' addresses.
        "    address = ctypes.cast(ctypes_ptr, ctypes.c_void_p).value or 0",
        "    address: A string or integer, the IP address.  Either IPv4 or IPv6",
        'address = IPv4Address("TCP", "localhost", 80)',
        "Free Software Foundation, 59 Temple Place,\n Suite 330, Boston, MA  02111-1307",
        "Carnegie Mellon University\n      5000 Forbes Avenue\n      Pittsburgh, PA  15213-3890",
    ],
)
def test_address_lookalikes_and_unlabelled_shops_stay(text: str) -> None:
    assert detect(DETECTOR, text) == []


@pytest.mark.parametrize(
    ("prose", "address"),
    [
        ("el mes pasado me mudé a {}", "Calle de Toledo 42, 3º B, 28005 Madrid"),
        ("le mois dernier j'ai déménagé au {}", "8 bis avenue Jean Jaurès, 31000 Toulouse"),
        ("il mese scorso mi sono trasferito in {}", "Via Garibaldi 23, 10122 Torino"),
        ("w zeszłym miesiącu przeprowadziłem się na {}", "ul. Długa 12, 80-827 Gdańsk"),
        ("vorige maand ben ik verhuisd naar de {}", "Keizersgracht 123-II, 1015 CJ Amsterdam"),
        ("förra månaden flyttade jag till {}", "Drottninggatan 53, 111 21 Stockholm"),
        ("τον περασμένο μήνα μετακόμισα στην {}", "Οδός Ερμού 25, 105 63 Αθήνα"),
        ("先月{}に引っ越しました", "東京都新宿区西新宿2丁目8番1号"),
        ("我上个月搬到了{}", "北京市朝阳区建国路88号3单元502室"),
        ("지난달에 {}(으)로 이사했습니다", "부산광역시 해운대구 센텀중앙로 79"),
    ],
)
def test_address_that_prose_calls_a_home_is_masked_without_the_prose(prose: str, address: str) -> None:
    assert detect(DETECTOR, prose.format(address)) == [("POSTAL_ADDRESS", address)]


def test_a_shop_that_moved_stays() -> None:
    assert detect(DETECTOR, "Our shop moved to Via Roma 12, 00184 Roma") == []


@pytest.mark.parametrize(
    ("label", "address"),
    [
        # Han names need no space between family and given name: after a name label they are names, and
        # the address after them (a full-width comma between, as CJK text writes it) is that person's.
        ("收件人：", "李华 上海市浦东新区世纪大道100号"),
        ("联系人：", "王小明，北京市朝阳区建国路88号"),
        ("聯絡人：", "陳大文、台北市信義區信義路五段7號"),
        ("氏名：", "山田太郎 〒100-0001 東京都千代田区千代田1-1"),
        ("連絡先：", "鈴木一郎　東京都新宿区西新宿2丁目8番1号"),
    ],
)
def test_an_address_after_a_labelled_han_name_is_masked_with_the_name(label: str, address: str) -> None:
    assert detect(DETECTOR, f"{label}{address}") == [("POSTAL_ADDRESS", address)]


@pytest.mark.parametrize(
    "text",
    [
        "公司位于北京市朝阳区建国路88号。",  # a company's address: no name before it
        "本社：〒100-0001 東京都千代田区千代田1-1",  # a head office's label is no name label
        "客户端：上海市浦东新区世纪大道100号",  # a label that only starts like one (客户 in 客户端)
    ],
)
def test_han_addresses_without_a_labelled_name_before_them_stay(text: str) -> None:
    assert detect(DETECTOR, text) == []


@pytest.mark.parametrize(
    ("text", "address"),
    [
        (
            "Parcel for Nguyễn Văn An, 123 Lê Lợi, Quận 1, TP. Hồ Chí Minh",
            "Nguyễn Văn An, 123 Lê Lợi, Quận 1, TP. Hồ Chí Minh",
        ),
        ("Olga Petrova, ul. Tverskaya 7, Moskva", "Olga Petrova, ul. Tverskaya 7, Moskva"),
        ("Иван Петров, ул. Ленина 5, г. Казань", "Иван Петров, ул. Ленина 5, г. Казань"),
        (
            "Budi Santoso, Jl. Sudirman No. 5, Kec. Menteng, Jakarta Pusat",
            "Budi Santoso, Jl. Sudirman No. 5, Kec. Menteng, Jakarta Pusat",
        ),
        (
            "Juan Pérez, Calle Hidalgo 23, Col. Centro, Oaxaca.",
            "Juan Pérez, Calle Hidalgo 23, Col. Centro, Oaxaca",
        ),
    ],
)
def test_an_address_without_a_postcode_after_a_persons_name_is_masked_with_the_name(
    text: str, address: str
) -> None:
    assert detect(DETECTOR, text) == [("POSTAL_ADDRESS", address)]


@pytest.mark.parametrize(
    "text",
    [
        "Alice Smith, 42 Years Old, Engineer",
        "John Smith, 5 items, District 9 report",
        "Version 2, Build 7, District 9 edition",
        "Kec. Menteng, 5 Juni, Jakarta",  # no person's name before it
        "foo(a, b, ul. x 7, c)",
    ],
)
def test_comma_separated_numbers_and_words_without_a_name_or_a_street_stay(text: str) -> None:
    assert detect(DETECTOR, text) == []
