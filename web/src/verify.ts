// "Verify this deal" in the browser: the check of felt.table.deals.verify_hand and
// felt.table.commitment.verify_opening, with WebCrypto's SHA-256.
//
// Before the first card the server publishes the root of a Merkle tree over the deck; leaf
// i is SHA-256("felt-card-v1" | i | card | salt_i), inner nodes SHA-256("felt-node-v1" |
// left | right). Each card the viewer saw came with its salt and sibling hashes: every one
// must hash up to the root, and no deck position may open as two different cards.
import type { WatchTableResponse } from "./gen/poker/v1/table_service_pb";
import type { CardProof } from "./gen/poker/v1/table_pb";
import type { Card } from "./gen/poker/events/v1/events_pb";
import { cardText } from "./cards";

const enc = new TextEncoder();
const LEAF_TAG = enc.encode("felt-card-v1");
const NODE_TAG = enc.encode("felt-node-v1");

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function fromHex(hex: string): Uint8Array {
  if (hex.length % 2 || /[^0-9a-fA-F]/.test(hex)) throw new Error("not hex");
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function sha256(data: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", data));
}

/** True when `proof` shows its card sat at its position of the deck committed to by `root`. */
export async function verifyOpening(root: string, proof: CardProof): Promise<boolean> {
  try {
    if (proof.position < 0 || proof.position > 255 || proof.card > 51) return false;
    let node = await sha256(
      concat(LEAF_TAG, Uint8Array.of(proof.position, proof.card), fromHex(proof.salt)),
    );
    for (const step of proof.steps) {
      const sibling = fromHex(step.sibling);
      node = await sha256(
        step.siblingIsRight ? concat(NODE_TAG, node, sibling) : concat(NODE_TAG, sibling, node),
      );
    }
    return toHex(node) === root.toLowerCase();
  } catch {
    return false;
  }
}

export interface HandCheck {
  root: string;
  verified: number;
  problems: string[];
  ok: boolean;
}

type Seen = [card: number, position: number | null][];

function known(cards: Card[], positions: number[] | null): Seen {
  const out: Seen = [];
  cards.forEach((c, i) => {
    if (c.kind.case === "code") out.push([c.kind.value, positions ? (positions[i] ?? -1) : null]);
  });
  return out;
}

function visibleCards(item: WatchTableResponse): Seen {
  if (item.item.case !== "event") return [];
  const ev = item.item.value.event;
  switch (ev.case) {
    case "holeCardsDealt":
      return known(ev.value.cards, ev.value.deckPositions);
    case "cardsDrawn":
      return known(ev.value.drawn, ev.value.deckPositions);
    case "streetStarted":
      return known(ev.value.cards, ev.value.deckPositions);
    case "cardsShown":
      return known(ev.value.cards, null);
    default:
      return [];
  }
}

/** Checks every card a viewer saw in a hand (GetHandHistory's items) against its commitment. */
export async function verifyHand(items: WatchTableResponse[]): Promise<HandCheck> {
  let root = "";
  let verified = 0;
  const problems: string[] = [];
  const seen = new Map<number, number>();
  for (const item of items) {
    if (item.item.case !== "event") continue;
    const ev = item.item.value.event;
    if (ev.case === "deckCommitted") {
      root = ev.value.root;
      continue;
    }
    const shown = visibleCards(item);
    if (shown.length && !root) {
      problems.push("cards were dealt before any deck commitment");
      continue;
    }
    for (const [card, position] of shown) {
      const name = cardText(card);
      let proof = position !== null ? item.cardProofs.find((p) => p.position === position) : undefined;
      if (!proof) proof = item.cardProofs.find((p) => p.card === card);
      if (!proof && position === null && [...seen.values()].includes(card)) continue;
      if (!proof) {
        problems.push(`${name}: no proof received`);
        continue;
      }
      if (proof.card !== card || (position !== null && proof.position !== position)) {
        problems.push(`${name}: the proof is for another card or position`);
        continue;
      }
      if (!(await verifyOpening(root, proof))) {
        problems.push(`${name} at position ${proof.position}: proof does not match root`);
        continue;
      }
      const before = seen.get(proof.position);
      if (before !== undefined && before !== card) {
        problems.push(`position ${proof.position} opened as two different cards`);
        continue;
      }
      seen.set(proof.position, card);
      verified++;
    }
  }
  return { root, verified, problems, ok: Boolean(root) && problems.length === 0 };
}
