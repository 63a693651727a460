// Bad links fall back to the lobby: a malformed `%` escape used to throw in parse and
// blank the page (reload included).
import { test } from "node:test";
import assert from "node:assert/strict";
import { parse, href } from "./route.js";

test("the screens' links parse", () => {
  assert.deepEqual(parse("#/"), { name: "lobby" });
  assert.deepEqual(parse(""), { name: "lobby" });
  assert.deepEqual(parse("#/table/abc-123"), { name: "table", lounge: "abc-123" });
  assert.deepEqual(parse("#/hands"), { name: "hands" });
  assert.deepEqual(parse("#/replay/t1/h%3A7"), { name: "replay", lounge: "t1", hand: "h:7" });
});

test("a link made by href parses back to its route", () => {
  for (const r of [{ name: "table", lounge: "a b/c%" }, { name: "replay", lounge: "x", hand: "y:1" }, { name: "hands" }, { name: "lobby" }] as const) {
    assert.deepEqual(parse(href(r)), r);
  }
});

test("malformed escapes fall back to the lobby", () => {
  for (const bad of ["#/table/%", "#/table/%E0%A4%A", "#/table/%zz", "#/replay/%/x", "#/%ff", "#/hands/%"]) {
    assert.deepEqual(parse(bad), { name: "lobby" }, bad);
  }
});

test("unknown screens, missing ids, extra parts and overlong ids are the lobby", () => {
  for (const bad of ["#/nowhere", "#/table", "#/table/", "#/replay/t1", "#/replay/t1/", "#/table/a/b", `#/table/${"x".repeat(201)}`]) {
    assert.deepEqual(parse(bad), { name: "lobby" }, bad);
  }
});
