# ruff: noqa: RUF001  (letters, colons and commas of other scripts are meant)
"""Names of people introduced by cues in many languages and scripts; capitalised look-alikes stay."""

from __future__ import annotations

import pytest
from kronii.redaction import RedactionEngine
from kronii.redaction.detectors import PersonNameDetector

from tests.unit.redaction.redaction_support import detect

DETECTOR = PersonNameDetector()


@pytest.mark.parametrize(
    ("text", "name"),
    [
        # Prose cues.
        ("Hi, my name is Anna Kowalska and I work in Kraków.", "Anna Kowalska"),
        ("Mein Name ist Klaus Becker.", "Klaus Becker"),
        ("Je m'appelle Jean-Pierre Dubois.", "Jean-Pierre Dubois"),
        ("Hola, me llamo María José García.", "María José García"),
        ("Mi chiamo Giuseppe Rossi.", "Giuseppe Rossi"),
        ("Olá, meu nome é João Pedro Silva.", "João Pedro Silva"),
        ("Mijn naam is Pieter van der Berg.", "Pieter van der Berg"),
        ("Nazywam się Krzysztof Nowak.", "Krzysztof Nowak"),
        ("Merhaba, benim adım Ayşe Yılmaz.", "Ayşe Yılmaz"),
        ("Меня зовут Иван Петров.", "Иван Петров"),
        ("Мене звати Олена Шевченко.", "Олена Шевченко"),
        ("Με λένε Γιώργος Παπαδόπουλος.", "Γιώργος Παπαδόπουλος"),
        ("اسمي محمد عبد الله وأنا من مصر", "محمد عبد الله"),
        ("שמי דוד כהן ואני גר בחיפה", "דוד כהן"),
        ("मेरा नाम राहुल शर्मा है।", "राहुल शर्मा"),
        ("আমার নাম রহিম উদ্দিন এবং আমি ঢাকায় থাকি", "রহিম উদ্দিন"),
        ("我叫王小明，今年三十岁。", "王小明"),
        ("私の名前は山田太郎です。", "山田太郎"),
        ("제 이름은 김민준입니다.", "김민준"),
        ("Tên tôi là Nguyễn Văn An.", "Nguyễn Văn An"),
        ("Halo, nama saya Budi Santoso.", "Budi Santoso"),
        ("ผมชื่อสมชาย ใจดี ครับ", "สมชาย ใจดี"),
        ("Jag heter Erik Johansson.", "Erik Johansson"),
        ("Jina langu ni Amani Mwangi.", "Amani Mwangi"),
        # Field labels and keys of structured data.
        ("Name: Daniel Okoro", "Daniel Okoro"),
        ("Nombre: Carlos Ruiz", "Carlos Ruiz"),
        ("Имя: Мария Иванова", "Мария Иванова"),
        ("姓名：张伟", "张伟"),
        ("氏名：山田 太郎", "山田 太郎"),
        ("이름: 이서연", "이서연"),
        ("الاسم: فاطمة الزهراء", "فاطمة الزهراء"),
        ("Card holder: JOHN Q. PUBLIC", "JOHN Q. PUBLIC"),
        ('{"id": 7, "first_name": "Ada", "plan": "pro"}', "Ada"),
        ("customer_name=Grace Hopper&plan=pro", "Grace Hopper"),
        ("  patient_name: Hanna Virtanen", "Hanna Virtanen"),
        # Titles and honorifics.
        ("Bitte an Herrn Klaus Becker weiterleiten.", "Klaus Becker"),
        ("Mme Claire Martin a appelé.", "Claire Martin"),
        ("Dr. Emily Clarke will see you now.", "Emily Clarke"),
        ("La Sra. Lucía Fernández llamó.", "Lucía Fernández"),
        ("السيد أحمد حسن من القاهرة", "أحمد حسن"),
        ("昨日、山田太郎さんに資料を送りました。", "山田太郎"),
        ("王先生明天来。", "王"),
        ("어제 김민준 씨에게 파일을 보냈어요.", "김민준"),
        # Mail headers and git trailers.
        ("From: Jane Doe <jane@example.org>", "Jane Doe"),
        ("Signed-off-by: Grace Hopper <grace@example.com>", "Grace Hopper"),
        ("> On Tue, May 14, 2024 at 10:02 AM Chris Wong <chris@example.com.au> wrote:", "Chris Wong"),
        # Signatures after a closing formula.
        ("Thanks for the logs.\n\nBest regards,\nJane Smith", "Jane Smith"),
        ("Die Logs hängen an.\nMit freundlichen Grüßen\nErika Mustermann", "Erika Mustermann"),
        ("Ci-joint le fichier.\nCordialement,\nMarie Curie", "Marie Curie"),
        ("Файл во вложении.\nС уважением,\nАнна Смирнова", "Анна Смирнова"),
    ],
)
def test_name_after_a_cue_is_found(text: str, name: str) -> None:
    assert detect(DETECTOR, text) == [("PERSON_NAME", name)]


@pytest.mark.parametrize(
    "text",
    [
        "Name: kronii-sensor",
        "Name: Web Server v2",
        "  name: backend",
        "- name: Release Pipeline",
        '{"name": "web-dashboard", "replicas": 3}',
        "To: all staff",
        "Author: kronii-bot <bot@kronii.dev>",
        "class UserAccountManager(BaseService):",
        "def get_user_name(self) -> str:",
        "The Quick Start Guide explains Docker Compose setup.",
        "Microsoft Visual Studio Code crashed on Windows Server.",
        "New York and San Francisco offices closed Monday.",
        "Deployed Redis Cluster to Frankfurt and Tokyo regions.",
        "What is your name?",
        "Thanks,\nRegards",
        "Best regards,\nThe Support Team",
        "お客様へ、ご注文ありがとうございます。",
        "皆様、こんにちは",
        "고객님 안녕하세요",
        "선생님 감사합니다",
        "数学老师很好。",
        "北京和上海的服务器已经重启。",
        "東京と大阪のサーバーを再起動しました。",
        "Сервер в Москве перезапущен после обновления.",
        "Die Deutsche Bahn fährt heute nach Berlin Hauptbahnhof.",
        # Found in real sources: a generic key naming a thing, a qualified label, a title-shaped place name.
        "    name = 'Pango Markup'",
        '    "name": "General Options",',
        "Organization Name: Twisted Matrix Labs",
        "{'en': 'Pana, IL'}",
        "    # approximation to z*M.  To avoid loss of precision",
        "approved by Creative Commons as being equivalent",
    ],
)
def test_capitalised_lookalikes_stay(text: str) -> None:
    assert detect(DETECTOR, text) == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Certificate issued to Priya Sharma on 3 May.", "Priya Sharma"),
        ("Cheque made out to Kwame Mensah.", "Kwame Mensah"),
        ("Report prepared for Hans Müller by the audit team.", "Hans Müller"),
        ("Contract signed by Aiyana Redcloud and witnessed.", "Aiyana Redcloud"),
        ("Parcel delivered to Nguyễn Văn An, at the door.", "Nguyễn Văn An"),
        ("Invoice addressed to Olga Petrova, ul. Tverskaya 7", "Olga Petrova"),
        ("The module was written by Peter Deutsch. Thanks to all.", "Peter Deutsch"),
        ("Rechnung ausgestellt auf Jürgen Weiß.", "Jürgen Weiß"),
        ("Facture établie au nom de Camille Lefèvre.", "Camille Lefèvre"),
        ("Factura emitida a Lucía Fernández.", "Lucía Fernández"),
        ("Fattura intestata a Giulia Bianchi.", "Giulia Bianchi"),
        ("Pacote entregue a Thiago Alves.", "Thiago Alves"),
        ("Factuur op naam van Sanne de Vries.", "Sanne de Vries"),
        ("Hàng giao cho Trần Thị Mai.", "Trần Thị Mai"),
        ("Owned by Seán O'Connor and Mary McDonald.", "Seán O'Connor"),
    ],
)
def test_a_full_name_after_a_role_phrase_is_a_name(text: str, name: str) -> None:
    assert ("PERSON_NAME", name) in detect(DETECTOR, text)


@pytest.mark.parametrize(
    "text",
    [
        "The certificate was issued to Let's Encrypt.",
        "Prepared for Acme Corp.",
        "Signed by Microsoft Corporation",
        "Delivered to GitHub Actions runner",
        "Sent to Amazon Web Services for review",
        "Prepared for IBM Research",
        "Issued to Deutsche Bank AG",
        "This report was prepared by the audit team.",
        "Signed by Kwame.",  # one word after a role phrase is too little to call a name
        "This commit was written by Claude Code and reviewed.",
        "Sent to Google Gemini Assistant",
        "approved by Creative Commons as being equivalent",
    ],
)
def test_organisations_and_things_after_a_role_phrase_stay(text: str) -> None:
    assert detect(DETECTOR, text) == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Reviewer: Fatima Zahra El Amrani", "Fatima Zahra El Amrani"),
        ("Assignee: Wei Zhang", "Wei Zhang"),
        ("Guest name: Søren Kierkegaard", "Søren Kierkegaard"),
        ("Passenger name: Minho Lee", "Minho Lee"),
    ],
)
def test_the_labels_of_trackers_and_bookings_introduce_a_name(text: str, name: str) -> None:
    assert detect(DETECTOR, text) == [("PERSON_NAME", name)]


@pytest.mark.parametrize(
    "text",
    [
        "Reviewer: platform-team",
        "Assignee: unassigned",
        "Owner name: root",
        "Account name: prod-billing",
        '"codeguru-reviewer:DescribeCodeReview",',  # an IAM action: one CamelCase word is an identifier
        "reporter: TerminalReporter",
    ],
)
def test_those_labels_before_a_team_a_state_or_an_account_stay(text: str) -> None:
    assert detect(DETECTOR, text) == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Kontakt: Frau Dr. Sabine Krüger, Tel. 030 1234567", "Sabine Krüger"),
        ("Bitte an Frau Dr. Sabine Krüger wenden.", "Sabine Krüger"),
        ("Herr Prof. Dr. Klaus Becker", "Klaus Becker"),
        ("Signed by Dr. Amara Okafor", "Amara Okafor"),
    ],
)
def test_a_name_after_two_or_three_titles_is_found(text: str, name: str) -> None:
    assert ("PERSON_NAME", name) in detect(DETECTOR, text)


def test_engine_masks_the_name_and_keeps_the_cue() -> None:
    text = "Ticket 4521\nCustomer: Sophie Martin\nStatus: open"
    assert RedactionEngine().redact(text).text == "Ticket 4521\nCustomer: [PERSON_NAME_1]\nStatus: open"


def test_repeated_lines_give_the_same_names_as_the_whole_text() -> None:
    # Long texts are scanned once per distinct line; a name must be found on every repeat, in text order.
    lines = ["Name: Daniel Okoro", "build ok", "From: Jane Doe <jane@example.org>", "x" * 40]
    text = "\n".join(lines[i % len(lines)] for i in range(2000))
    found = detect(DETECTOR, text)
    assert found.count(("PERSON_NAME", "Daniel Okoro")) == 500
    assert found.count(("PERSON_NAME", "Jane Doe")) == 500


@pytest.mark.parametrize(
    ("table", "names"),
    [
        (
            "customer_id,name,email,country\n1001,Grace Hopper,grace@exemple.com,US\n1002,web-team,x@exemple.com,US",
            ["Grace Hopper"],
        ),
        (
            " id |     name      |  email\n----+---------------+------------------\n"
            "  1 | Ada Lovelace  | ada@exemple.org\n  2 | Linus Berg    | linus@exemple.se\n(2 rows)",
            ["Ada Lovelace", "Linus Berg"],
        ),
        ("| Nombre | Ciudad |\n| --- | --- |\n| Carlos Ruiz | Madrid |", ["Carlos Ruiz"]),
        ("first_name\tlast_name\tplan\nAda\tLovelace\tpro", ["Ada", "Lovelace"]),
        ("patient;ward;bed\nHanna Virtanen;B;12", ["Hanna Virtanen"]),
    ],
)
def test_names_in_a_column_headed_by_a_persons_label_are_found(table: str, names: list[str]) -> None:
    assert detect(DETECTOR, table) == [("PERSON_NAME", name) for name in names]


@pytest.mark.parametrize(
    "table",
    [
        "name,version,license\nRequests,2.31.0,Apache 2.0\nFlask Login,0.6.3,MIT",  # packages, not people
        "NAME                          READY   STATUS\nbackend-7d9f8c6b5d-x2k4p      1/1     Running",
        "| Name | Type |\n| --- | --- |\n| Build Cache | volume |",
    ],
)
def test_a_name_column_of_things_stays(table: str) -> None:
    assert detect(DETECTOR, table) == []
