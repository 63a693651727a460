import { test } from "node:test";
import assert from "node:assert/strict";
import { bestHand } from "./evaluate.js";

const RANKS = "23456789TJQKA";
const SUITS = "cdhs";
const code = (t: string) => RANKS.indexOf(t[0]) * 4 + SUITS.indexOf(t[1]);
const cards = (t: string) => t.split(" ").map(code);
const text = (cs: number[]) => cs.map((c) => RANKS[c >> 2] + SUITS[c & 3]).sort().join(" ");

test("categories of seven cards, and the cards that make them", () => {
  const cases: [string, string, string][] = [
    ["Ah Kh Qh Jh Th 2c 3d", "ROYAL_FLUSH", "Ah Jh Kh Qh Th"],
    ["9s 8s 7s 6s 5s Ad Ac", "STRAIGHT_FLUSH", "5s 6s 7s 8s 9s"],
    ["Ah 2d 3c 4s 5h Kd Qc", "STRAIGHT", "2d 3c 4s 5h Ah"],
    ["Kc Kd Ks Kh 2c 3d 9h", "FOUR_OF_A_KIND", "Kc Kd Kh Ks"],
    ["Kc Kd Ks 2h 2c 3d 9h", "FULL_HOUSE", "2c 2h Kc Kd Ks"],
    ["Ah 9h 7h 4h 2h Kd Kc", "FLUSH", "2h 4h 7h 9h Ah"],
    ["Qc Qd Qs 7h 2c 3d 9h", "THREE_OF_A_KIND", "Qc Qd Qs"],
    ["Qc Qd 7s 7h 2c 2d 9h", "TWO_PAIR", "7h 7s Qc Qd"],
    ["Qc Qd 7s 6h 2c 3d 9h", "PAIR", "Qc Qd"],
    ["Ac Jd 7s 6h 2c 3d 9h", "HIGH_CARD", "Ac"],
  ];
  for (const [hand, category, made] of cases) {
    const got = bestHand(cards(hand))!;
    assert.equal(got.category, category, hand);
    assert.equal(text(got.cards), made.split(" ").sort().join(" "), hand);
  }
});

test("fewer than five cards: a pair in the hole, or nothing yet", () => {
  assert.equal(bestHand(cards("As Ad"))!.category, "PAIR");
  assert.equal(bestHand(cards("As Kd"))!.category, "HIGH_CARD");
  assert.equal(bestHand([]), null);
});

test("ranking: a better hand scores higher", () => {
  const a = bestHand(cards("Ah Ad Kc 7s 2d"))!;
  const b = bestHand(cards("Ah Ad Qc 7s 2d"))!;
  const wheel = bestHand(cards("Ah 2d 3c 4s 5h"))!;
  const six = bestHand(cards("6h 2d 3c 4s 5h"))!;
  assert.ok(a.score[1] === b.score[1] && a.score[3] > b.score[3]);
  assert.ok(six.score[1] > wheel.score[1], "the wheel is the lowest straight");
});
