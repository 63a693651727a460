// Translations: one flat JSON file of messages per language (i18n/<code>.json), English
// being the reference every other file must match key for key (tests/unit/test_web_i18n.py
// checks that, and that every ErrorInfo reason the services send has an "error.<REASON>").
// Messages take {name} placeholders. See docs/web.md, "Adding a language".
// English is in the main bundle (it is also every message's fallback); the other
// languages are loaded when chosen, so the page carries only what it shows.
import en from "./en.json";
import { formatMessage } from "../format";

export type Key = keyof typeof en;
type Messages = Record<Key, string>;

export const LANGUAGES: { code: string; name: string; load: () => Promise<Messages> }[] = [
  { code: "en", name: "English", load: async () => en },
  { code: "lt", name: "Lietuvių", load: async () => (await import("./lt.json")).default },
  { code: "da", name: "Dansk", load: async () => (await import("./da.json")).default },
  { code: "pl", name: "Polski", load: async () => (await import("./pl.json")).default },
  { code: "nb", name: "Norsk bokmål", load: async () => (await import("./nb.json")).default },
];

const STORAGE_KEY = "felt.lang";

function initial(): string {
  const saved = localStorage.getItem(STORAGE_KEY);
  if (saved && LANGUAGES.some((l) => l.code === saved)) return saved;
  for (const pref of navigator.languages ?? []) {
    const base = pref.toLowerCase().split("-")[0];
    const code = base === "no" || base === "nn" ? "nb" : base;
    if (LANGUAGES.some((l) => l.code === code)) return code;
  }
  return "en";
}

let current = "en";
let messages: Messages = en;

export function language(): string {
  return current;
}

/** Switches to language `code` (loading its messages first); the saved or browser's one by default. */
export async function setLanguage(code: string = initial()): Promise<void> {
  const lang = LANGUAGES.find((l) => l.code === code);
  if (!lang) return;
  messages = await lang.load();
  current = code;
  localStorage.setItem(STORAGE_KEY, code);
  document.documentElement.lang = code;
}

/** The message `key` in the current language, with {placeholders} filled in and its
 * counted parts (`{n, plural, one {…} other {…}}`) chosen by the language's plural rules. */
export function t(key: Key, params: Record<string, string | number> = {}): string {
  const text = messages[key] ?? en[key] ?? key;
  return formatMessage(text, params, current, (n) => chips(n));
}

/** A message looked up by a key made at run time (an error reason, a hand category). */
export function tDynamic(key: string, fallback: string): string {
  return (messages as Record<string, string>)[key] ?? fallback;
}

/** Chip amounts with the language's digit grouping. */
export function chips(n: bigint | number): string {
  return new Intl.NumberFormat(current === "nb" ? "nb-NO" : current).format(n);
}
