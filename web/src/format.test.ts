// Counted strings by the languages' CLDR plural rules, in every language's own messages:
// n = 1, 2, 5, 12, 21, 22 (1 and 21 are "one" in Lithuanian, 12 is not; 22 is "few" in
// Polish, 12 is "many").
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { formatMessage, pluralCategory } from "./format.js";

const LANGS = ["en", "lt", "da", "pl", "nb"] as const;
const messages = (code: string): Record<string, string> => JSON.parse(readFileSync(`src/i18n/${code}.json`, "utf8"));
const N = [1, 2, 5, 12, 21, 22];

const DISCARD: Record<(typeof LANGS)[number], string[]> = {
  en: ["Discard 1 card", "Discard 2 cards", "Discard 5 cards", "Discard 12 cards", "Discard 21 cards", "Discard 22 cards"],
  lt: ["Pakeisti 1 kortą", "Pakeisti 2 kortas", "Pakeisti 5 kortas", "Pakeisti 12 kortų", "Pakeisti 21 kortą", "Pakeisti 22 kortas"],
  da: ["Byt 1 kort", "Byt 2 kort", "Byt 5 kort", "Byt 12 kort", "Byt 21 kort", "Byt 22 kort"],
  pl: ["Wymień 1 kartę", "Wymień 2 karty", "Wymień 5 kart", "Wymień 12 kart", "Wymień 21 kart", "Wymień 22 karty"],
  nb: ["Bytt 1 kort", "Bytt 2 kort", "Bytt 5 kort", "Bytt 12 kort", "Bytt 21 kort", "Bytt 22 kort"],
};

const SECONDS: Record<(typeof LANGS)[number], string[]> = {
  en: ["1 second left", "2 seconds left", "5 seconds left", "12 seconds left", "21 seconds left", "22 seconds left"],
  lt: ["Liko 1 sekundė", "Liko 2 sekundės", "Liko 5 sekundės", "Liko 12 sekundžių", "Liko 21 sekundė", "Liko 22 sekundės"],
  da: ["1 sekund tilbage", "2 sekunder tilbage", "5 sekunder tilbage", "12 sekunder tilbage", "21 sekunder tilbage", "22 sekunder tilbage"],
  pl: ["Została 1 sekunda", "Zostały 2 sekundy", "Zostało 5 sekund", "Zostało 12 sekund", "Zostało 21 sekund", "Zostały 22 sekundy"],
  nb: ["1 sekund igjen", "2 sekunder igjen", "5 sekunder igjen", "12 sekunder igjen", "21 sekunder igjen", "22 sekunder igjen"],
};

test("CLDR categories as the languages count", () => {
  assert.deepEqual(N.map((n) => pluralCategory("lt", n)), ["one", "few", "few", "other", "one", "few"]);
  assert.deepEqual(N.map((n) => pluralCategory("pl", n)), ["one", "few", "many", "many", "many", "few"]);
  assert.deepEqual(N.map((n) => pluralCategory("en", n)), ["one", "other", "other", "other", "other", "other"]);
});

for (const code of LANGS) {
  test(`counted strings in ${code}`, () => {
    const m = messages(code);
    assert.deepEqual(N.map((n) => formatMessage(m["action.discardN"], { n }, code)), DISCARD[code]);
    assert.deepEqual(N.map((n) => formatMessage(m["table.secondsLeft"], { n }, code)), SECONDS[code]);
  });

  test(`every message of ${code} formats fully, for every count`, () => {
    const m = messages(code);
    // Every placeholder the English message names gets a value (a count for a plural one,
    // text else), as the code passes them: the language must use no other.
    const names = (text: string) => [...text.matchAll(/\{(\w+)(\}|\s*,\s*plural)/g)].map((m) => [m[1], m[2] !== "}"] as const);
    for (const [key, text] of Object.entries(m)) {
      for (const n of [0, ...N]) {
        const params = Object.fromEntries(names(messages("en")[key]).map(([name, counted]) => [name, counted ? n : "x"]));
        const out = formatMessage(text, params, code);
        assert.ok(!/[{}]/.test(out), `${code} ${key}: ${out}`);
        if (text.includes("plural")) assert.ok(!/(^|\s)#(\s|$)/.test(out), `${code} ${key}: a "#" left: ${out}`);
      }
      if (text.includes("plural")) assert.match(text, /other\s*\{/, `${code} ${key} needs an "other" branch`);
    }
  });
}

test("every language has exactly English's messages", () => {
  const en = Object.keys(messages("en")).sort();
  for (const code of LANGS) assert.deepEqual(Object.keys(messages(code)).sort(), en, code);
});

test("placeholders and an exact match", () => {
  assert.equal(formatMessage("{who} draws {n, plural, =0 {no cards} one {# card} other {# cards}}", { who: "Ann", n: 0 }, "en"), "Ann draws no cards");
  assert.equal(formatMessage("{n, plural, one {# card} other {# cards}}", { n: 1200 }, "en", (n) => n.toLocaleString("en")), "1,200 cards");
  assert.equal(formatMessage("Hi {missing}", {}, "en"), "Hi {missing}");
  assert.equal(formatMessage("broken {n, plural, one {x}", { n: 1 }, "en"), "broken {n, plural, one {x}");
});

test("chip counts: the count formatted with the language's grouping, the noun agreeing", () => {
  const group = (code: string) => (n: number) => new Intl.NumberFormat(code === "nb" ? "nb-NO" : code).format(n);
  const f = (code: string, n: number) => formatMessage(messages(code)["lobby.toppedUp"], { amount: n }, code, group(code));
  assert.equal(f("en", 1), "1 chip added.");
  assert.equal(f("en", 1500), "1,500 chips added.");
  assert.equal(f("lt", 21), "Pridėta 21 žetonas.");
  assert.equal(f("lt", 12), "Pridėta 12 žetonų.");
  assert.equal(f("pl", 22), "Dodano 22 żetony.");
  assert.equal(f("pl", 1000), "Dodano 1000 żetonów.");
});

test("the deal check's sentence: one card, both cards, all n cards", () => {
  const f = (code: string, n: number) => formatMessage(messages(code)["replay.verified"], { n, root: "ab" }, code);
  assert.match(f("en", 1), /^Verified: the 1 card you saw was fixed/);
  assert.match(f("en", 2), /^Verified: both cards you saw were fixed/);
  assert.match(f("en", 7), /^Verified: all 7 cards you saw were fixed/);
  assert.match(f("lt", 10), /visos 10 matytų kortų/);
  assert.match(f("lt", 5), /visos 5 matytos kortos/);
  assert.match(f("pl", 10), /wszystkich 10 widzianych kart było/);
  assert.match(f("pl", 4), /wszystkie 4 widziane karty były/);
});
