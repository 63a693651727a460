"""The one settings reader (``felt.config.settings``), checked against the code and the docs.

* Nothing in ``libs/`` or ``services/`` reads the environment but the reader: no
  ``os.environ.get``/``os.getenv``/``os.environ[...]`` anywhere else, and no setting's name
  written out as a string (a key looked up by hand), nor put together (``f"FELT_{x}"``).
* Every declared setting is read somewhere (a declaration nobody reads is a lie in the docs).
* ``docs/operations.md``'s table is the one ``felt config --markdown`` generates.
* The reader's rules (blank is unset, ranges, ``off``, masking) and ``felt config`` itself.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from felt.config import settings as S
from felt.config.settings import SETTINGS, ConfigError
from felt.tools import config_cli
from felt.wire.limits import CHIP_CAP
from services.cli import main

ROOT = Path(__file__).resolve().parents[2]
READER = ROOT / "libs" / "felt" / "config" / "settings.py"
NAME = re.compile(r"^(FELT_[A-Z0-9_]+|REDIS_URL|DATABASE_URL|FORWARDED_ALLOW_IPS)$")
PREFIX = re.compile(r"^FELT_[A-Z0-9_]*$")  # the start of a name put together


def _sources() -> list[Path]:
    roots = (ROOT / "libs" / "felt", ROOT / "libs" / "felt_dev", ROOT / "services")
    return sorted(
        p
        for root in roots
        for p in root.rglob("*.py")
        if "__pycache__" not in p.parts and p != READER
    )


def _environment_reads(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Where ``tree`` reads the environment or names a setting by hand."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if NAME.match(node.value):
                yield node.lineno, f"the setting {node.value!r} named by hand"
        elif isinstance(node, ast.JoinedStr) and len(node.values) > 1:
            first = node.values[0]
            if isinstance(first, ast.Constant) and PREFIX.match(str(first.value)):
                yield node.lineno, "a setting's name put together"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value
            is_environ = isinstance(target, ast.Attribute) and target.attr == "environ"
            if (is_environ and node.func.attr in ("get", "pop", "setdefault")) or (
                node.func.attr == "getenv"
            ):
                yield node.lineno, "the environment read"
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "environ"
        ):
            yield node.lineno, "the environment read"


def test_nothing_but_the_reader_reads_the_environment() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {what}"
        for path in _sources()
        for line, what in _environment_reads(ast.parse(path.read_text(), str(path)))
    ]
    assert not found, "read a setting with felt.config.settings instead:\n" + "\n".join(found)


def test_the_scan_sees_every_way_of_reading() -> None:
    """The scan itself: it finds a lookup, a subscript, ``getenv``, a name written out and
    one put together."""
    source = (
        'import os\nos.environ.get("X")\nos.environ["Y"]\nos.getenv("Z")\n'
        'env.get("FELT_TABLE_ADDR", "")\nkey = f"FELT_WATCH_{name}"\n'
    )
    lines = sorted({line for line, _ in _environment_reads(ast.parse(source))})
    assert lines == [2, 3, 4, 5, 6]
    harmless = 'import os\nenv = dict(os.environ)\nraise E(f"FELT_X must be {low} or more")\n'
    assert list(_environment_reads(ast.parse(harmless))) == []


def _names_used(paths: list[Path]) -> set[str]:
    used: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Name):
                used.add(node.id)
            elif isinstance(node, ast.Attribute):
                used.add(node.attr)
            elif isinstance(node, ast.alias):
                used.add(node.asname or node.name)
    return used


def test_every_declared_setting_is_read() -> None:
    used = _names_used(_sources())
    tests_used = _names_used(sorted((ROOT / "tests").rglob("conftest.py")))
    unread = [
        s.name
        for s in SETTINGS
        if s.name not in used and not (s.services == ("dev",) and s.name in tests_used)
    ]
    assert not unread, f"declared but read nowhere (remove them, or read them): {unread}"


def test_each_setting_is_declared_once_under_its_own_name() -> None:
    names = [s.name for s in SETTINGS]
    assert len(names) == len(set(names))
    for setting in SETTINGS:
        assert getattr(S, setting.name) is setting
        assert NAME.match(setting.name)
        assert setting.help and "\n" not in setting.help
        for cell in (setting.help, setting.doc, setting.default_doc):
            assert "|" not in cell, f"{setting.name}: a '|' would split the docs table"
    assert S.CHIP_CAP == CHIP_CAP  # felt.wire.limits' bound, which the reader cannot import


def test_the_docs_table_is_the_generated_one() -> None:
    path = ROOT / "docs" / "operations.md"
    document = path.read_text()
    assert config_cli.BEGIN in document and config_cli.END in document
    assert config_cli.with_table(document) == document, (
        "docs/operations.md's table of settings differs from libs/felt/config/settings.py: "
        "run `felt config --write-docs docs/operations.md`"
    )
    for setting in SETTINGS:
        assert f"| `{setting.name}` |" in document


# ---------------------------------------------------------------- the reader's rules


def test_blank_is_unset_and_values_are_stripped() -> None:
    assert S.FELT_WATCH_PAGE.read({}) == 200
    assert S.FELT_WATCH_PAGE.read({"FELT_WATCH_PAGE": "  "}) == 200
    assert S.FELT_WATCH_PAGE.read({"FELT_WATCH_PAGE": " 300 "}) == 300
    assert S.FELT_WATCH_PAGE.source({"FELT_WATCH_PAGE": ""}) == "default"
    assert S.FELT_WATCH_PAGE.source({"FELT_WATCH_PAGE": "300"}) == "environment"
    assert S.FELT_INSTANCE_ID.read({"FELT_INSTANCE_ID": " a "}) == "a"
    assert S.FELT_ADMIN_TOKEN.read({"FELT_ADMIN_TOKEN": " x "}) == " x "  # a secret, exact


@pytest.mark.parametrize(
    ("setting", "raw", "message"),
    [
        (S.FELT_WATCH_PAGE, "9", "FELT_WATCH_PAGE must be a whole number from 10 to 5000"),
        (S.FELT_WATCH_PAGE, "5s", "FELT_WATCH_PAGE must be a whole number from 10 to 5000"),
        (S.FELT_SEAT_RATE_PER_S, "0", "FELT_SEAT_RATE_PER_S must be a number from 0.1 to 10000"),
        (S.FELT_SEAT_RATE_PER_S, "nan", "FELT_SEAT_RATE_PER_S must be a number from"),
        (S.FELT_SEAT_RATE_PER_S, "lots", "FELT_SEAT_RATE_PER_S must be a number from 0.1 to 10000"),
        (S.FELT_GRPC_REFLECTION, "maybe", "FELT_GRPC_REFLECTION must be 1 or 0"),
        (S.FELT_GATEWAY_SECURE_COOKIE, "yes", "FELT_GATEWAY_SECURE_COOKIE must be one of auto"),
        (S.FELT_GATEWAY_ADDR, "nowhere", "FELT_GATEWAY_ADDR must be host:port"),
        (S.FELT_AI_METRICS_PORT, "65536", "FELT_AI_METRICS_PORT must be a port (0 to 65535)"),
        (S.FELT_LOG_LEVEL, "loud", "FELT_LOG_LEVEL must be one of DEBUG"),
        # A brace would move the hash tag off the shard: a shard's keys in different slots.
        (S.FELT_AI_STREAM, "ai:{x}", "FELT_AI_STREAM must not contain { or }"),
        (S.FELT_AI_DEAD_STREAM, "dead}", "FELT_AI_DEAD_STREAM must not contain { or }"),
    ],
)
def test_a_bad_value_is_refused_naming_the_setting(
    setting: S.Setting[object], raw: str, message: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        setting.read({setting.name: raw})
    assert str(refused.value).startswith(message)
    assert repr(raw) not in str(refused.value)  # a value in the wrong variable may be a secret


def test_kinds() -> None:
    port = S.FELT_PROJECTOR_METRICS_PORT
    assert port.read({}) == 9465
    assert port.read({port.name: "off"}) is None
    assert port.read({port.name: "0"}) == 0
    assert S.FELT_LOBBY_METRICS_PORT.read({}) is None
    assert S.FELT_GRPC_REFLECTION.read({}) is None
    assert S.FELT_GRPC_REFLECTION.read({"FELT_GRPC_REFLECTION": "off"}) is False
    assert S.FELT_DEV_MODE.read({"FELT_DEV_MODE": "TRUE"}) is True
    assert S.FELT_DEV_MODE.read({"FELT_DEV_MODE": "0"}) is False
    assert S.FELT_LOG_LEVEL.read({"FELT_LOG_LEVEL": "debug"}) == "DEBUG"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        ("redis://:hunter2@cache:6379/1", "redis://:****@cache:6379/1"),
        ("postgresql://felt:s3cr%40t@db:5432/felt", "postgresql://felt:****@db:5432/felt"),
        (
            "postgresql://felt@db/felt?password=s3cret&ssl=1",
            "postgresql://felt@db/felt?password=****&ssl=1",
        ),
    ],
)
def test_url_passwords_are_masked(url: str, shown: str) -> None:
    assert S.mask_url(url) == shown
    assert S.DATABASE_URL.shown({"DATABASE_URL": url}) == shown


# ---------------------------------------------------------------- felt config


SECRET = "an-admin-token-that-nobody-may-see-0123456789"


def test_felt_config_prints_values_and_sources_with_secrets_masked(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for setting in SETTINGS:
        monkeypatch.delenv(setting.name, raising=False)
    monkeypatch.setenv("FELT_ADMIN_TOKEN", SECRET)
    monkeypatch.setenv("FELT_WATCH_PAGE", "300")
    monkeypatch.setenv("REDIS_URL", "redis://:pw-in-url@cache:6379/0")
    assert main(["config", "--service", "table"]) == 0
    out = capsys.readouterr().out
    assert SECRET not in out and "pw-in-url" not in out
    lines = {line.split()[0]: line.split()[1:] for line in out.splitlines()}
    assert lines["FELT_ADMIN_TOKEN"] == ["****", "(environment)"]
    assert lines["FELT_TOKEN_SECRET"] == ["(unset)", "(default)"]
    assert lines["FELT_WATCH_PAGE"] == ["300", "(environment)"]
    assert lines["FELT_WATCH_BUFFER"] == ["512", "(default)"]
    assert lines["REDIS_URL"] == ["redis://:****@cache:6379/0", "(environment)"]
    assert set(lines) == {s.name for s in S.read_by("table")}
    assert "FELT_GATEWAY_ADDR" not in lines  # the gateway's, not the table service's


def test_felt_config_exits_2_naming_an_invalid_setting(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FELT_LOBBY_ACCESS_TTL_S", "1")
    monkeypatch.setenv("FELT_LOBBY_METRICS_PORT", "http")
    assert main(["config"]) == 2
    captured = capsys.readouterr()
    assert "felt config: FELT_LOBBY_ACCESS_TTL_S must be a whole number from 60 to 86400" in (
        captured.err
    )
    assert "felt config: FELT_LOBBY_METRICS_PORT must be a port" in captured.err
    assert re.search(r"^FELT_LOBBY_ACCESS_TTL_S +\(invalid\) +\(environment\)$", captured.out, re.M)


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("10.0.0.0/8, localhost", "entry 2 is not an address or a network"),
        ("10.0.0.1/8", "entry 1 is a network with host bits set"),
        ("::ffff:0.0.0.0/96", "entry 1 would trust every address"),
    ],
)
def test_felt_config_names_malformed_trusted_proxies(
    raw: str, why: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As the services refuse it (exit 2), by the entry's place: the value is not repeated."""
    monkeypatch.setenv("FELT_TRUSTED_PROXIES", raw)
    assert main(["config", "--service", "lobby"]) == 2
    captured = capsys.readouterr()
    assert f"felt config: FELT_TRUSTED_PROXIES: {why}" in captured.err
    assert re.search(r"^FELT_TRUSTED_PROXIES +\(invalid\) +\(environment\)$", captured.out, re.M)
    assert raw not in captured.err
    monkeypatch.setenv("FELT_TRUSTED_PROXIES", " 10.0.0.0/8 ,, ::ffff:10.1.0.0/112")
    assert main(["config", "--service", "lobby"]) == 0


def test_felt_config_markdown_is_the_docs_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "--markdown"]) == 0
    table = capsys.readouterr().out.strip()
    assert table == config_cli.markdown_table()
    assert table in (ROOT / "docs" / "operations.md").read_text()
    assert table.count("\n") == len(SETTINGS) + 1


def test_felt_config_writes_the_docs_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "operations.md"
    doc.write_text(f"before\n{config_cli.BEGIN}\nstale\n{config_cli.END}\nafter\n")
    assert main(["config", "--write-docs", str(doc)]) == 0
    assert doc.read_text() == (
        f"before\n{config_cli.BEGIN}\n{config_cli.markdown_table()}\n{config_cli.END}\nafter\n"
    )
    assert "wrote" in capsys.readouterr().out


def test_flags_override_the_environment() -> None:
    env = {"REDIS_URL": "redis://a/0", "FELT_AI_CONCURRENCY": "4", "HOME": "/h"}
    merged = S.overridden({S.REDIS_URL: None, S.FELT_AI_CONCURRENCY: 2}, env)
    assert merged == {"REDIS_URL": "redis://a/0", "FELT_AI_CONCURRENCY": "2", "HOME": "/h"}
    assert env["FELT_AI_CONCURRENCY"] == "4"  # a copy


def test_a_service_stops_with_status_2_naming_a_bad_setting() -> None:
    """As a process: ``felt ai-worker`` with a bad setting exits 2 before it connects."""
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "ai-worker", "--metrics-port", "off"],
        capture_output=True,
        text=True,
        env={**os.environ, "FELT_AI_CLAIM_IDLE_MS": "5", "REDIS_URL": "redis://127.0.0.1:1/0"},
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "felt ai-worker: FELT_AI_CLAIM_IDLE_MS must be a whole number from 100" in done.stderr
