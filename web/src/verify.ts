// "Verify this deal" in the browser: the check of felt.core.table.deals.verify_hand and
// felt.core.table.commitment.verify_opening, with WebCrypto's SHA-256.
//
// Before the first card the server publishes the root of a Merkle tree over the deck; leaf
// i is SHA-256("felt-card-v1" | i | card | salt_i), inner nodes SHA-256("felt-node-v1" |
// left | right). Each card the viewer saw came with its salt and sibling hashes: every one
// must hash up to the root by the one path its position has in a tree of the committed
// leaf count (else a server could commit to several leaves per position and open whichever
// card suits it), no deck position may open as two different cards, and a card dealt once
// play has begun (a board card, a draw) must take the deck's next positions (else the server
// could open whichever undealt position holds the card it wants).
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

/** Whether each sibling on the way up from leaf `position` of a `leafCount`-leaf tree is on
 * the right (felt.core.table.commitment.proof_shape): a position's one path. */
export function proofShape(position: number, leafCount: number): boolean[] {
  const shape: boolean[] = [];
  let index = position;
  for (let width = leafCount; width > 1; width = Math.ceil(width / 2)) {
    const sibling = index ^ 1;
    if (sibling < width) shape.push(sibling > index);
    index = Math.floor(index / 2);
  }
  return shape;
}

/** True when `proof` shows its card sat at its position of the deck committed to by `root`,
 * by its position's path in a tree of `leafCount` leaves. */
export async function verifyOpening(root: string, proof: CardProof, leafCount: number): Promise<boolean> {
  try {
    if (proof.position < 0 || proof.position >= leafCount || proof.position > 255 || proof.card > 51) return false;
    const shape = proofShape(proof.position, leafCount);
    if (proof.steps.length !== shape.length || proof.steps.some((s, i) => s.siblingIsRight !== shape[i])) return false;
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

/** What is wrong with the deck positions `item` deals (hidden cards' too; `dealt`: those
 * dealt before in the hand, updated): one dealt twice, or a card dealt in play (a board
 * card, a draw) off the deck's top (felt.core.table.deals). */
function dealingProblems(item: WatchTableResponse, dealt: Set<number>): string[] {
  if (item.item.case !== "event") return [];
  const ev = item.item.value.event;
  let positions: number[];
  let inPlay: boolean;
  if (ev.case === "holeCardsDealt") [positions, inPlay] = [ev.value.deckPositions, false];
  else if (ev.case === "cardsDrawn" || ev.case === "streetStarted") [positions, inPlay] = [ev.value.deckPositions, true];
  else return [];
  const problems = positions.filter((p) => dealt.has(p)).map((p) => `position ${p} was dealt twice`);
  const top = dealt.size ? Math.max(...dealt) + 1 : 0;
  if (inPlay && positions.some((p, i) => p !== top + i)) {
    problems.push(`positions ${positions.join(", ")} were dealt where the deck's next ones are ${top} on`);
  }
  for (const p of positions) dealt.add(p);
  return problems;
}

/** Checks every card a viewer saw in a hand (GetHandHistory's items) against its commitment. */
export async function verifyHand(items: WatchTableResponse[]): Promise<HandCheck> {
  let root = "";
  let leafCount = 0;
  let verified = 0;
  const problems: string[] = [];
  const seen = new Map<number, number>();
  const dealt = new Set<number>();
  for (const item of items) {
    if (item.item.case !== "event") continue;
    const ev = item.item.value.event;
    if (ev.case === "deckCommitted") {
      if (root && dealt.size) problems.push("the deck was committed again after cards were dealt");
      root = ev.value.root;
      leafCount = ev.value.leafCount;
      continue;
    }
    const shown = visibleCards(item);
    if (shown.length && !root) {
      problems.push("cards were dealt before any deck commitment");
      continue;
    }
    problems.push(...dealingProblems(item, dealt));
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
      if (!(await verifyOpening(root, proof, leafCount))) {
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
