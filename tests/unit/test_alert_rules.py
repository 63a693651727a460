"""deploy/prometheus/alerts.yaml and deploy/grafana/felt.json name only metrics the code
registers (the registries of every service, scanned), and the rules file is well formed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from prometheus_client import CollectorRegistry

from felt.service.metrics import metric_names
from services.ai_worker.metrics import WorkerMetrics
from services.gateway.metrics import GatewayMetrics
from services.lobby.metrics import LobbyMetrics
from services.projector.metrics import ProjectorMetrics
from services.table.metrics import TableMetrics

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
METRIC = re.compile(r"\bfelt_[a-z0-9_]+\b")
SEVERITIES = {"critical", "warning"}


def registries() -> list[CollectorRegistry]:
    """One of each service's registries, with the gauges the servers add when they start."""
    table = TableMetrics()
    table.watch(active=lambda: 0, resting=lambda: 0, watchers=lambda: 0, redis_silent=lambda: 0.0)
    gateway = GatewayMetrics()
    gateway.watch(connections=lambda: 0, streams=lambda: 0)
    return [
        table.registry,
        gateway.registry,
        LobbyMetrics().registry,
        ProjectorMetrics("member").registry,
        WorkerMetrics("consumer").registry,
    ]


def registered() -> set[str]:
    return set().union(*(metric_names(r) for r in registries()))


def test_every_service_records_the_rpc_metrics() -> None:
    for registry in registries()[:3]:  # the gRPC services and the gateway
        names = metric_names(registry)
        assert {"felt_rpc_requests_total", "felt_rpc_duration_seconds_bucket"} <= names


def test_the_alert_rules_are_well_formed_and_name_registered_metrics() -> None:
    rules = yaml.safe_load((DEPLOY / "prometheus" / "alerts.yaml").read_text())
    known = registered()
    seen: set[str] = set()
    assert [g["name"] for g in rules["groups"]] == ["felt"]
    for group in rules["groups"]:
        assert group["rules"], group["name"]
        for rule in group["rules"]:
            assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}, rule
            name = rule["alert"]
            assert re.fullmatch(r"Felt[A-Za-z]+", name) and name not in seen, name
            seen.add(name)
            assert rule["labels"]["severity"] in SEVERITIES, name
            assert rule["annotations"]["summary"] and rule["annotations"]["description"], name
            assert re.fullmatch(r"\d+[smh]", rule.get("for", "0s")), name
            named = set(METRIC.findall(rule["expr"]))
            assert named, f"{name} names no Felt metric"
            assert named <= known, f"{name}: {sorted(named - known)} are not registered"
    # what an operator must act on (issue #24)
    assert {
        "FeltNoTableService",
        "FeltStuckSagas",
        "FeltRpcErrorRate",
        "FeltAiDecisionLatencyHigh",
        "FeltAppendConflicts",
        "FeltProjectorLag",
        "FeltProjectorTableFailed",
        "FeltAiDeadLetters",
    } <= seen


def test_the_series_alerts_count_up_exist_before_their_first_increment() -> None:
    """rate()/increase() see nothing of a series' first sample: a one-off failure counted on
    a series created by that failure never fires an alert (issue #24)."""
    projector = ProjectorMetrics("member").exposition().decode()
    for kind in ("redis", "database", "table"):
        assert f'felt_projector_errors_total{{kind="{kind}"}} 0.0' in projector
    assert "felt_projector_failed_tables 0.0" in projector
    worker = WorkerMetrics("consumer").exposition().decode()
    for reason in ("undecodable", "unknown", "delivered", "invalid", "other"):
        assert f'felt_ai_dead_letters_total{{reason="{reason}"}} 0.0' in worker
    for kind in ("transient", "bot", "redis", "auth"):
        assert f'felt_ai_errors_total{{kind="{kind}"}} 0.0' in worker


def test_the_dashboard_names_registered_metrics() -> None:
    dashboard = json.loads((DEPLOY / "grafana" / "felt.json").read_text())
    known = registered()
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            named = set(METRIC.findall(target["expr"]))
            assert named and named <= known, f"{panel['title']}: {sorted(named - known)}"
