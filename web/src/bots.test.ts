import { test } from "node:test";
import assert from "node:assert/strict";
import { botNumber } from "./bots.js";

test("a lobby-made bot's number; a person's name is left alone", () => {
  assert.equal(botNumber("Bot 2 (normal)"), 2);
  assert.equal(botNumber("Bot 10 (hard)"), 10);
  assert.equal(botNumber("Bot 2"), null);
  assert.equal(botNumber("Bot 2 (sneaky)"), null);
  assert.equal(botNumber("Robot 2 (easy)"), null);
});
