"""Keyword assignments: the value is the finding, not the key; references and placeholders are not secrets."""

from __future__ import annotations

import pytest
from kronii.redaction.detectors import CommandSecretDetector, KeywordSecretDetector

from tests.unit.redaction.redaction_support import detect

DETECTOR = KeywordSecretDetector()
COMMANDS = CommandSecretDetector()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=hunter2", ("PASSWORD", "hunter2")),
        ("DB_PASSWORD='c0rrect-h0rse'", ("PASSWORD", "c0rrect-h0rse")),
        ('{"PASSWORD": "Tr0ub4dor&3"}', ("PASSWORD", "Tr0ub4dor&3")),
        ("passwd: s3cr3t!", ("PASSWORD", "s3cr3t!")),
        ("spring.datasource.password=Sup3rS3cret", ("PASSWORD", "Sup3rS3cret")),
        ("export PGPASSWORD=pg_pass_2024", ("PASSWORD", "pg_pass_2024")),
        ("mysql --user=root --password=R00tPw! db", ("PASSWORD", "R00tPw!")),
        ("app --password hunter22 --verbose", ("PASSWORD", "hunter22")),
        ("Server=tcp:db;Database=app;User Id=sa;Password=My$tr0ngPw;", ("PASSWORD", "My$tr0ngPw")),
        ("CREATE USER app WITH PASSWORD 'l3tm3in!';", ("PASSWORD", "l3tm3in!")),
        ("ALTER USER 'bob'@'%' IDENTIFIED BY 'b0bs-pw';", ("PASSWORD", "b0bs-pw")),
        ("<password>xml-s3cret</password>", ("PASSWORD", "xml-s3cret")),
        ("my wifi password is Blu3Sky#77", ("PASSWORD", "Blu3Sky#77")),
        ("export FOO_TOKEN=a1b2c3d4e5f6", ("SECRET", "a1b2c3d4e5f6")),
        ('api_key = "9f8e7d6c5b4a3210"', ("SECRET", "9f8e7d6c5b4a3210")),
        ("client_secret: Zm9vYmFyYmF6cXV4MTIz", ("SECRET", "Zm9vYmFyYmF6cXV4MTIz")),
        ("X-API-Key: 5c2f9e1a7b3d4c6e", ("SECRET", "5c2f9e1a7b3d4c6e")),
        ("Authorization: Bearer abcDEF123456ghiJKL", ("SECRET", "abcDEF123456ghiJKL")),
        ("SECRET_KEY_BASE=3b7f9c1d5e2a8b4f6c0d", ("SECRET", "3b7f9c1d5e2a8b4f6c0d")),
        ("const apiKey = 'AbC123xYz789';", ("SECRET", "AbC123xYz789")),
        ("ENV SESSION_TOKEN 'tok-8891-xq'", ("SECRET", "tok-8891-xq")),
        ("/callback?code=x&access_token=ya1b2c3d4e5&state=y", ("SECRET", "ya1b2c3d4e5")),
        ('$password = "Pssw0rd!"', ("PASSWORD", "Pssw0rd!")),
        ("password: str = 'annotated-pw1'", ("PASSWORD", "annotated-pw1")),
    ],
)
def test_value_of_secret_key_is_found(text: str, expected: tuple[str, str]) -> None:
    assert detect(DETECTOR, text) == [expected]


@pytest.mark.parametrize(
    "text",
    [
        "password = get_password()",
        "password = os.environ['DB_PASSWORD']",
        "token = self.token",
        "api_key=api_key",
        "password = user_password",
        "password: str",
        "password: Optional[str] = None",
        'password = ""',
        "PASSWORD=${DB_PASSWORD}",
        "token: <your-token-here>",
        "password: ********",
        "API_KEY=YOUR_API_KEY",
        "Enter password:",
        "[sudo] password for alice:",
        "Password: required",
        "max_tokens = 4096",
        "token_type=bearer",
        "tokenizer = AutoTokenizer()",
        "the password is incorrect",
        "password reset link sent",
        "keyboard = us",
        "PWD=/home/alice/src",
        "password_file: /run/secrets/db",
        "if password != expected:",
        "secret: !vault |",
        'help="The password to use"',
        "token = {token}",
        "auth: true",
        "pass force_zip64 to the writer",
    ],
)
def test_references_and_placeholders_are_not_secrets(text: str) -> None:
    assert detect(DETECTOR, text) == []


@pytest.mark.parametrize(
    ("text", "password"),
    [
        ("mysql -u root -pS3cretPw app", "S3cretPw"),
        ("sshpass -p 'hunter2' ssh admin@host", "hunter2"),
        ("curl -u alice:wonderland99 https://api.example.com", "wonderland99"),
        ("redis-cli -h cache -a r3disPw ping", "r3disPw"),
        ("docker login -u bot -p dockerPw123 registry.example.com", "dockerPw123"),
        ("smbclient //srv/share -U bob%b0bpass", "b0bpass"),
        ("htpasswd -b .htpasswd carol carolPw9", "carolPw9"),
    ],
)
def test_command_line_passwords(text: str, password: str) -> None:
    assert detect(COMMANDS, text) == [("PASSWORD", password)]


@pytest.mark.parametrize(
    "text",
    [
        "mysql -u root -p app",  # -p alone prompts
        "mysql --port 3306",
        "ssh -p 2222 host",
        "curl -u alice: https://api.example.com",
    ],
)
def test_command_lines_without_passwords(text: str) -> None:
    assert detect(COMMANDS, text) == []
