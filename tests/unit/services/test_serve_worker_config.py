"""``felt serve``'s in-process AI workers read the ``FELT_AI_*`` settings a ``felt ai-worker``
reads, and take from the process what it decides itself (its table service, Redis, stream,
shards, AI token; no metrics server; a consumer name each).

Found by the archive run: ``felt serve`` built the workers' settings by hand, so its
``FELT_AI_TRIM_INTERVAL_S=1`` was never read and the decision streams were trimmed every
10 s, the default, instead of every second.
"""

from __future__ import annotations

import pytest

from services.ai_worker.config import WorkerConfig
from services.serve import worker_config
from services.table.server import ConfigError, TableServerConfig

DEV = {"FELT_DEV_MODE": "1", "REDIS_URL": "redis://127.0.0.1:6390/4"}


def test_the_ai_settings_of_the_environment_are_read() -> None:
    env = {
        **DEV,
        "FELT_AI_TRIM_INTERVAL_S": "1",
        "FELT_AI_CLAIM_IDLE_MS": "750",
        "FELT_AI_CONCURRENCY": "3",
        "FELT_AI_MAX_DELIVERIES": "7",
        "FELT_AI_BOT_THREAD": "1",
    }
    table = TableServerConfig.from_env(env)
    config = worker_config(table, "127.0.0.1:4321", "the-shared-ai-token", env)
    assert config.trim_interval_s == 1
    assert config.claim_idle_ms == 750
    assert config.concurrency == 3
    assert config.max_deliveries == 7
    assert config.bot_thread


def test_what_the_process_decides_is_its_own() -> None:
    env = {
        **DEV,
        "FELT_TABLE_TARGET": "elsewhere:1",
        "FELT_AI_TOKEN": "another-token",
        "FELT_AI_METRICS_PORT": "9999",
        "FELT_AI_CONSUMER": "one-name",
        "FELT_DECISION_SHARDS": "3",
    }
    table = TableServerConfig.from_env(env)
    config = worker_config(table, "127.0.0.1:4321", "the-shared-ai-token", env)
    assert config.table_target == "127.0.0.1:4321"
    assert config.ai_token == "the-shared-ai-token"
    assert config.redis_url == table.redis_url == DEV["REDIS_URL"]
    assert (config.stream, config.shards) == (table.ai_stream, table.decision_shards)
    assert config.shards == 3
    assert config.metrics_port is None
    assert config.consumer == ""  # each worker names itself: several share the process


def test_unset_they_are_a_workers_defaults() -> None:
    table = TableServerConfig.from_env(DEV)
    config = worker_config(table, "127.0.0.1:4321", "token", DEV)
    default = WorkerConfig()
    assert config.trim_interval_s == default.trim_interval_s
    assert config.claim_idle_ms == default.claim_idle_ms
    assert config.concurrency == default.concurrency


def test_a_bad_ai_setting_is_refused_by_name() -> None:
    env = {**DEV, "FELT_AI_TRIM_INTERVAL_S": "-1"}
    table = TableServerConfig.from_env(env)
    with pytest.raises(ConfigError, match="FELT_AI_TRIM_INTERVAL_S"):
        worker_config(table, "127.0.0.1:4321", "token", env)
