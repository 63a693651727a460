// Filling in a message: {name} placeholders, and ICU MessageFormat's plural argument,
// `{n, plural, =0 {none} one {# card} few {# cards} other {# cards}}`, whose branch is
// chosen by the language's CLDR plural rules (Intl.PluralRules, built into every browser
// and Node, kept current with CLDR by them) and whose `#` is the count in the language's
// digits. Only this subset of ICU is used by the messages (docs/web.md, "Counted strings"),
// so no parser library is shipped; the branches' names are CLDR's (zero, one, two, few,
// many, other) plus exact `=N` matches, and `other` is required.
// Pure (no imports), so `npm test` runs it under Node.

type Params = Record<string, string | number>;

const rulesCache = new Map<string, Intl.PluralRules>();

/** The CLDR plural category of `n` in `locale` ("one", "few", "many", "other", ...). */
export function pluralCategory(locale: string, n: number): Intl.LDMLPluralRule {
  let rules = rulesCache.get(locale);
  if (!rules) {
    rules = new Intl.PluralRules(locale);
    rulesCache.set(locale, rules);
  }
  return rules.select(n);
}

/** The text between the brace at `open` and its matching close, and the index after it. */
function braced(text: string, open: number): [string, number] | null {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === "{") depth++;
    else if (text[i] === "}" && --depth === 0) return [text.slice(open + 1, i), i + 1];
  }
  return null;
}

/** The branches of a plural argument's body ("one {…} other {…}"), by selector. */
function branches(body: string): Map<string, string> | null {
  const out = new Map<string, string>();
  let i = 0;
  while (i < body.length) {
    const m = /^\s*(=\d+|zero|one|two|few|many|other)\s*\{/.exec(body.slice(i));
    if (!m) return /^\s*$/.test(body.slice(i)) ? out : null;
    const got = braced(body, i + m[0].length - 1);
    if (!got) return null;
    out.set(m[1], got[0]);
    i = got[1];
  }
  return out;
}

/**
 * `text` with its placeholders filled from `params`, plural arguments resolved for
 * `locale`; `number` formats a count (digit grouping). A placeholder without a value, or a
 * malformed plural, is left as written (visible, never a crash).
 */
export function formatMessage(text: string, params: Params, locale: string, number: (n: number) => string = String): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf("{", i);
    if (open < 0) break;
    out += text.slice(i, open);
    const got = braced(text, open);
    if (!got) {
      out += text.slice(open);
      return out;
    }
    const [inner, after] = got;
    const plural = /^\s*(\w+)\s*,\s*plural\s*,([\s\S]*)$/.exec(inner);
    if (plural && plural[1] in params) {
      const n = Number(params[plural[1]]);
      const options = branches(plural[2]);
      const chosen = options && (options.get(`=${n}`) ?? options.get(pluralCategory(locale, n)) ?? options.get("other"));
      if (chosen !== undefined && chosen !== null) {
        out += formatMessage(chosen.replace(/#/g, number(n)), params, locale, number);
      } else {
        out += text.slice(open, after);
      }
    } else if (/^\w+$/.test(inner) && inner in params) {
      out += String(params[inner]);
    } else {
      out += text.slice(open, after);
    }
    i = after;
  }
  return out + text.slice(i);
}
