// A retried join keeps its request id until it gets a definite answer, so a retry after
// UNAVAILABLE cannot hold a second buy-in.
import { test } from "node:test";
import assert from "node:assert/strict";
import { PendingIds, memoryStore, joinKey, definite, streamWait, sendRetriedOnce, ACTION_RETRY_MS } from "./retry.js";

function ids() {
  let n = 0;
  return new PendingIds(memoryStore(), () => `id-${++n}`);
}

test("a retry after an uncertain failure reuses the id", () => {
  const p = ids();
  const key = joinKey("p1", "lounge-1", 200n);
  const first = p.idFor(key);
  for (const code of ["unavailable", "deadline_exceeded", "unknown", "canceled", "internal"]) {
    p.answered(key, code);
    assert.equal(p.idFor(key), first, code);
  }
});

test("a definite answer ends the request: the next join gets a new id", () => {
  const p = ids();
  const key = joinKey("p1", "lounge-1", 200n);
  const first = p.idFor(key);
  p.answered(key, "");
  const second = p.idFor(key);
  assert.notEqual(second, first);
  p.answered(key, "failed_precondition", "TABLE_FULL");
  assert.notEqual(p.idFor(key), second);
});

test("UNAVAILABLE TABLES_UNAVAILABLE (outcome not known yet) keeps the id; a refusal ends it", () => {
  assert.equal(definite("unavailable", "TABLES_UNAVAILABLE"), false);
  assert.equal(definite("unavailable", ""), false);
  assert.equal(definite("failed_precondition", "SEAT_TAKEN"), true);
  assert.equal(definite("invalid_argument", ""), true);
  const p = ids();
  const key = joinKey("p1", "lounge-1", 200n);
  const first = p.idFor(key);
  p.answered(key, "unavailable", "TABLES_UNAVAILABLE");
  assert.equal(p.idFor(key), first);
});

test("another lounge, buy-in or player is another request", () => {
  const p = ids();
  const a = p.idFor(joinKey("p1", "lounge-1", 200n));
  assert.notEqual(p.idFor(joinKey("p1", "lounge-1", 300n)), a);
  assert.notEqual(p.idFor(joinKey("p1", "lounge-2", 200n)), a);
  assert.notEqual(p.idFor(joinKey("p2", "lounge-1", 200n)), a);
  assert.notEqual(p.idFor(joinKey("p1", "lounge-1", 200n, true)), a); // another request
  assert.equal(p.idFor(joinKey("p1", "lounge-1", 200n)), a);
});

test("a table stream refused for load waits longer before it is opened again", () => {
  const waits = (exhausted: boolean) => {
    const seen: number[] = [];
    let last = 0;
    for (let i = 0; i < 8; i++) seen.push((last = streamWait(last, exhausted)));
    return seen;
  };
  assert.deepEqual(waits(false), [500, 1000, 2000, 4000, 8000, 8000, 8000, 8000]);
  assert.deepEqual(waits(true), [5000, 10000, 20000, 40000, 60000, 60000, 60000, 60000]);
  assert.equal(streamWait(500, true), 5000); // a refusal after quick retries: at once 5 s
  assert.equal(streamWait(60000, false), 8000); // and back to the usual pace after it
});

test("an action that met UNAVAILABLE is sent once more, with the same request", async () => {
  const sent: string[] = [];
  const waits: number[] = [];
  const codes = ["unavailable", ""];
  const request = { requestId: "act-1" };
  const answer = await sendRetriedOnce(
    async () => {
      sent.push(request.requestId);
      const code = codes.shift();
      if (code) throw Object.assign(new Error(code), { code });
      return "answered";
    },
    (err) => (err as { code: string }).code,
    async (ms) => { waits.push(ms); },
  );
  assert.equal(answer, "answered");
  assert.deepEqual(sent, ["act-1", "act-1"]);
  assert.deepEqual(waits, [ACTION_RETRY_MS]);
});

test("an action is retried only once, and only after UNAVAILABLE", async () => {
  for (const [first, tries] of [["unavailable", 2], ["failed_precondition", 1]] as const) {
    let n = 0;
    await assert.rejects(
      sendRetriedOnce(
        async () => { n += 1; throw Object.assign(new Error(first), { code: first }); },
        (err) => (err as { code: string }).code,
        async () => {},
      ),
    );
    assert.equal(n, tries, first);
  }
});
