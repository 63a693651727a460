// The table's sounds, synthesised with the Web Audio API (a few oscillator notes each: no
// recorded files to license or download). Browsers refuse to start audio before the person
// has touched the page (autoplay rules), so the audio context is made at the first gesture
// (a pointer press or a key) and nothing plays before it. The mute switch is kept in
// localStorage, so a reload keeps the choice.
//
// What was played is counted on <html> (`data-sounds`: sounds started; `data-sound-last`:
// the latest kind; `data-sounds-held`: sounds asked for while muted or before a gesture), so
// a browser test can see what this module did without listening or timing anything.

export type Sound = "deal" | "bet" | "check" | "fold" | "turn" | "win";

const STORAGE_KEY = "felt.muted";

/** One tone: its frequency (Hz), start after the sound begins and length (s), and wave. */
interface Note {
  hz: number;
  at: number;
  len: number;
  wave: OscillatorType;
  gain: number;
}

const n = (hz: number, at: number, len: number, wave: OscillatorType = "sine", gain = 0.12): Note => ({ hz, at, len, wave, gain });

/** Short and quiet: a card's flick, a chip's click, a knock, a soft fall, two rising notes
 * for "your turn", a small arpeggio for a win. */
const NOTES: Record<Sound, Note[]> = {
  deal: [n(1800, 0, 0.03, "triangle", 0.06), n(1200, 0.025, 0.03, "triangle", 0.05)],
  bet: [n(2400, 0, 0.04, "square", 0.04), n(3100, 0.035, 0.05, "square", 0.03)],
  check: [n(180, 0, 0.06, "sine", 0.2), n(170, 0.09, 0.06, "sine", 0.16)],
  fold: [n(420, 0, 0.12, "triangle", 0.06)],
  turn: [n(660, 0, 0.12), n(880, 0.13, 0.16)],
  win: [n(523, 0, 0.12), n(659, 0.1, 0.12), n(784, 0.2, 0.22)],
};

let context: AudioContext | null = null;
let muted = localStorage.getItem(STORAGE_KEY) === "1";
const listeners = new Set<(muted: boolean) => void>();

function count(attr: "sounds" | "soundsHeld"): void {
  const data = document.documentElement.dataset;
  data[attr] = String(Number(data[attr] ?? "0") + 1);
}

/** Makes the audio context at the first gesture (pointer or key), as autoplay rules require. */
function unlock(): void {
  window.removeEventListener("pointerdown", unlock, true);
  window.removeEventListener("keydown", unlock, true);
  const Ctx = window.AudioContext ?? (window as unknown as { webkitAudioContext?: typeof AudioContext }).webkitAudioContext;
  if (!Ctx) return;
  try {
    context = new Ctx();
    void context.resume();
  } catch {
    context = null; // no audio on this device: the game plays on silently
  }
}
window.addEventListener("pointerdown", unlock, true);
window.addEventListener("keydown", unlock, true);

export function isMuted(): boolean {
  return muted;
}

export function setMuted(value: boolean): void {
  muted = value;
  localStorage.setItem(STORAGE_KEY, value ? "1" : "0");
  for (const l of listeners) l(value);
}

/** Told of every change of the mute switch (the header's button). */
export function onMuteChange(listener: (muted: boolean) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Plays `kind` now, unless muted or the page has had no gesture yet (then only counted). */
export function play(kind: Sound): void {
  if (muted || !context) {
    count("soundsHeld");
    return;
  }
  const start = context.currentTime;
  for (const note of NOTES[kind]) {
    const osc = context.createOscillator();
    const gain = context.createGain();
    osc.type = note.wave;
    osc.frequency.value = note.hz;
    // A quick rise and an exponential fall: no click at either end.
    gain.gain.setValueAtTime(0.0001, start + note.at);
    gain.gain.exponentialRampToValueAtTime(note.gain, start + note.at + 0.01);
    gain.gain.exponentialRampToValueAtTime(0.0001, start + note.at + note.len);
    osc.connect(gain).connect(context.destination);
    osc.start(start + note.at);
    osc.stop(start + note.at + note.len + 0.02);
  }
  count("sounds");
  document.documentElement.dataset.soundLast = kind;
}
