"""Reading a service's ``/metrics`` in the tests: one HTTP GET, parsed by prometheus_client."""

from __future__ import annotations

import asyncio

from prometheus_client.parser import text_string_to_metric_families


async def http_get(port: int, path: str, host: str = "127.0.0.1") -> tuple[int, str]:
    """The status and body of ``GET path`` (HTTP/1.1, the connection closed after it)."""
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    raw = (await reader.read()).decode()
    writer.close()
    await writer.wait_closed()
    head, _, body = raw.partition("\r\n\r\n")
    return int(head.split()[1]), body


async def scrape(
    port: int, path: str = "/metrics"
) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample ``/metrics`` serves: (name, labels) -> value."""
    status, body = await http_get(port, path)
    assert status == 200, body
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(body)
        for sample in family.samples
    }


def value(
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    """The sum of ``name``'s samples whose labels include ``labels`` (0 if there is none)."""
    wanted = set(labels.items())
    return sum(v for (n, have), v in samples.items() if n == name and wanted <= have)
