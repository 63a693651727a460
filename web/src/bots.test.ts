import { test } from "node:test";
import assert from "node:assert/strict";
import { botNumber, defaultLoungeName } from "./bots.js";

test("a lobby-made bot's number; a person's name is left alone", () => {
  assert.equal(botNumber("Bot 2 (normal)"), 2);
  assert.equal(botNumber("Bot 10 (hard)"), 10);
  assert.equal(botNumber("Bot 2"), null);
  assert.equal(botNumber("Bot 2 (sneaky)"), null);
  assert.equal(botNumber("Robot 2 (easy)"), null);
});

test("the clients' default lounge names are recognised; chosen names are not", () => {
  assert.deepEqual(defaultLoungeName("No-Limit Hold'em lounge"), { variant: "nlhe", kind: "lounge" });
  assert.deepEqual(defaultLoungeName("Five-Card Draw lounge"), { variant: "draw", kind: "lounge" });
  assert.deepEqual(defaultLoungeName("draw vs AI"), { variant: "draw", kind: "vsAi" });
  assert.equal(defaultLoungeName("Friday game"), null);
  assert.equal(defaultLoungeName("nlhe vs AI again"), null);
});
