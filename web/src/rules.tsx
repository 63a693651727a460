// The short rules of both variants, in the player's language.
import { t, type Key } from "./i18n";

const SECTIONS: [Key, Key[]][] = [
  ["rules.nlhe.title", ["rules.nlhe.1", "rules.nlhe.2", "rules.nlhe.3", "rules.nlhe.4", "rules.nlhe.5"]],
  ["rules.draw.title", ["rules.draw.1", "rules.draw.2", "rules.draw.3", "rules.draw.4", "rules.draw.5"]],
];

export function Rules() {
  return (
    <section class="panel rules" aria-labelledby="rules-title">
      <h2 id="rules-title">{t("rules.title")}</h2>
      {SECTIONS.map(([title, items]) => (
        <details>
          <summary>{t(title)}</summary>
          <ul>{items.map((k) => <li>{t(k)}</li>)}</ul>
        </details>
      ))}
      <p class="fine">{t("rules.chips")}</p>
    </section>
  );
}
