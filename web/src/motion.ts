// The table's motion: cards dealt, chips to the pot (CSS animations in style.css, a few
// hundred milliseconds on transform and opacity only) and the pot to the winner (the Web
// Animations API, here). None of it runs when the person asks for reduced motion
// (`prefers-reduced-motion: reduce`): style.css turns the CSS ones off and `fly` does
// nothing. Every animation element ignores the pointer, so motion never blocks a button.
//
// Animations started are counted on <html> (`data-motion`), so a browser test can see that
// motion ran, or that none did, without timing anything.

const REDUCED = "(prefers-reduced-motion: reduce)";

export function reducedMotion(): boolean {
  return typeof matchMedia === "function" && matchMedia(REDUCED).matches;
}

function counted(): void {
  const data = document.documentElement.dataset;
  data.motion = String(Number(data.motion ?? "0") + 1);
}

// CSS animations (a card dealt, a bet placed, the pot grown) count as they start.
document.addEventListener("animationstart", counted, true);

/** Moves `el` (absolutely placed in the felt) from the felt's centre to `to` (the winner's
 * seat, as percentages of the felt), fading as it lands; `done` is called at the end, or at
 * once when motion is reduced or the browser has no Web Animations. */
export function fly(el: HTMLElement, to: { left: string; top: string }, done: () => void): void {
  if (reducedMotion() || typeof el.animate !== "function") {
    done();
    return;
  }
  const anim = el.animate(
    [
      { left: "50%", top: "50%", opacity: 1 },
      { left: to.left, top: to.top, opacity: 0.15 },
    ],
    { duration: 600, easing: "cubic-bezier(.3,.7,.4,1)", fill: "forwards" },
  );
  counted();
  anim.onfinish = done;
  anim.oncancel = done;
}
