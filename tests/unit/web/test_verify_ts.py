"""The browser's "verify this deal" (web/src/verify.ts) catches the servers that cheat the
deck commitment, as ``felt.core.table.deals.verify_hand`` does
(tests/unit/table/test_deal_binding.py).

verify.ts is compiled with the web client's own TypeScript (web/node_modules, ``make web``)
and run under Node (whose WebCrypto it uses) on hands built here: an honest one, one from a
tree with two leaves per position (each proof hashing up to the published root), and one
whose flop is opened at positions the server chose. Skipped without Node or those modules.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from felt.core.cards import shuffled_deck
from felt.core.table.commitment import (
    CardOpening,
    _levels,
    commit_deck,
    leaf_hash,
    open_cards,
    salt_for,
)

ROOT = Path(__file__).resolve().parents[3]
WEB = ROOT / "web"
TSC = WEB / "node_modules" / ".bin" / "tsc"
TSC_OPTIONS = (
    *("--ignoreConfig", "--rootDir", "src", "--module", "esnext", "--target", "es2022"),
    *("--moduleResolution", "bundler", "--skipLibCheck", "--lib", "es2022,dom"),
)
SEED = hashlib.sha256(b"binding").digest()
DECK = shuffled_deck(SEED)

RUN = """
import { verifyHand } from "./verify.js";
const cases = JSON.parse(await new Response(process.stdin).text());
const out = {};
for (const [name, items] of Object.entries(cases)) out[name] = await verifyHand(items);
console.log(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    node = shutil.which("node")
    if node is None or not TSC.exists():
        pytest.skip("needs node and web/node_modules (make web)")
    out = tmp_path_factory.mktemp("verify-ts")
    subprocess.run(
        [str(TSC), *TSC_OPTIONS, "--outDir", str(out), "src/verify.ts"],
        cwd=WEB,
        check=True,
        timeout=300,
    )
    for js in out.rglob("*.js"):  # Node's ESM loader wants the extension the bundler adds
        js.write_text(js.read_text().replace('from "./cards"', 'from "./cards.js"'))
    (out / "package.json").write_text('{"type": "module"}')
    (out / "run.mjs").write_text(RUN)
    return out


def card(code: int | None) -> dict[str, Any]:
    if code is None:
        return {"kind": {"case": "hidden", "value": True}}
    return {"kind": {"case": "code", "value": code}}


def proof(o: CardOpening) -> dict[str, Any]:
    steps = [{"sibling": s, "siblingIsRight": r} for s, r in o.proof]
    return {"position": o.position, "card": o.card, "salt": o.salt, "steps": steps}


def item(
    case: str, value: dict[str, Any], openings: tuple[CardOpening, ...] | list[CardOpening] = ()
) -> dict[str, Any]:
    event = {"case": case, "value": value}
    return {
        "item": {"case": "event", "value": {"event": event}},
        "cardProofs": [proof(o) for o in openings],
    }


def hand(root: str, leaves: int, flop: list[int], flop_openings: list[CardOpening]) -> list[Any]:
    return [
        item("deckCommitted", {"root": root, "leafCount": leaves}),
        item(
            "holeCardsDealt",
            {"seat": 0, "cards": [card(DECK[0]), card(DECK[2])], "deckPositions": [0, 2]},
            open_cards(SEED, DECK, [0, 2]),
        ),
        item(
            "holeCardsDealt",
            {"seat": 1, "cards": [card(None), card(None)], "deckPositions": [1, 3]},
        ),
        item(
            "streetStarted",
            {"cards": [card(o.card) for o in flop_openings], "deckPositions": flop},
            flop_openings,
        ),
    ]


def two_leaves_per_position() -> tuple[str, CardOpening]:
    """A root over 104 leaves, two per position, and position 4 opened as its second card."""
    other = tuple(DECK[(i + 7) % 52] for i in range(52))
    leaves = []
    for position in range(52):
        salt = salt_for(SEED, position)
        leaves += [
            leaf_hash(position, DECK[position], salt),
            leaf_hash(position, other[position], salt),
        ]
    levels = _levels(leaves)
    index, path = 2 * 4 + 1, []
    for level in levels[:-1]:
        sibling = index ^ 1
        if sibling < len(level):
            path.append((level[sibling].hex(), sibling > index))
        index //= 2
    chosen = CardOpening(4, other[4], salt_for(SEED, 4).hex(), tuple(path))
    return levels[-1][0].hex(), chosen


def test_the_browser_check_catches_a_cheating_server(compiled: Path) -> None:
    root, leaves = commit_deck(SEED, DECK)
    cheat_root, chosen = two_leaves_per_position()
    cases = {
        "honest": hand(root, leaves, [4, 5, 6], open_cards(SEED, DECK, [4, 5, 6])),
        "two_leaves": hand(cheat_root, 52, [4], [chosen]),
        "off_the_top": hand(root, leaves, [4, 5, 30], open_cards(SEED, DECK, [4, 5, 30])),
    }
    run = subprocess.run(
        ["node", "run.mjs"],
        cwd=compiled,
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    got = json.loads(run.stdout)
    assert got["honest"]["ok"], got["honest"]
    assert got["honest"]["verified"] == 5
    assert not got["two_leaves"]["ok"]
    assert any("does not match root" in p for p in got["two_leaves"]["problems"])
    assert not got["off_the_top"]["ok"]
    assert any("next ones are 4" in p for p in got["off_the_top"]["problems"])
