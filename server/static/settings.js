// What each player sets for their own screen only (RULES: "each player picks the deck design
// they see on their own screen"): card back, card faces, the trick pause, the sound and the
// notification for a turn while the tab is hidden. Remembered in this browser's localStorage;
// nothing here is ever sent to the server.

const KEY = "hearts.settings";

export const BACKS = ["ruby", "navy", "forest"];
export const FACES = ["four", "two"]; // four-colour, classic two-colour
export const PAUSES = [0.6, 1.2, 2, 3]; // seconds a finished trick stays on the table

const DEFAULTS = { back: "ruby", face: "four", pause: 1.2, sound: false, notify: false, lang: null };

let current = load();

function load() {
  try {
    const saved = JSON.parse(localStorage.getItem(KEY) || "{}");
    const s = { ...DEFAULTS, ...saved };
    if (!BACKS.includes(s.back)) s.back = DEFAULTS.back;
    if (!FACES.includes(s.face)) s.face = DEFAULTS.face;
    if (!PAUSES.includes(s.pause)) s.pause = DEFAULTS.pause;
    s.sound = s.sound === true;
    s.notify = s.notify === true;
    return s;
  } catch {
    return { ...DEFAULTS };
  }
}

export const settings = () => current;

export function saveSetting(name, value) {
  current = { ...current, [name]: value };
  localStorage.setItem(KEY, JSON.stringify(current));
  applyLook();
  document.dispatchEvent(new CustomEvent("settings-changed", { detail: { name, value } }));
}

/** The deck design shows through two attributes on <html> that style.css reads. */
export function applyLook() {
  document.documentElement.dataset.back = current.back;
  document.documentElement.dataset.face = current.face;
}

const reduced = window.matchMedia ? window.matchMedia("(prefers-reduced-motion: reduce)") : null;

/** Cards may move: the player has not asked the system for reduced motion. */
export const motionAllowed = () => !(reduced && reduced.matches);

// --- your turn while the tab is hidden -------------------------------------------------------

let audio = null;

/** A short two-note chime made on the spot (no sound file to fetch). */
export function chime() {
  try {
    audio = audio || new AudioContext();
    const now = audio.currentTime;
    [660, 880].forEach((freq, i) => {
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      osc.frequency.value = freq;
      gain.gain.setValueAtTime(0.0001, now + i * 0.16);
      gain.gain.exponentialRampToValueAtTime(0.2, now + i * 0.16 + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, now + i * 0.16 + 0.3);
      osc.connect(gain).connect(audio.destination);
      osc.start(now + i * 0.16);
      osc.stop(now + i * 0.16 + 0.32);
    });
  } catch {
    // No audio on this system: the title still changes.
  }
}

/** Turn notifications on: the browser asks for permission only now, when the player chose it. */
export async function enableNotifications() {
  if (!("Notification" in window)) return false;
  const answer = Notification.permission === "granted" ? "granted" : await Notification.requestPermission();
  return answer === "granted";
}

export function notify(text) {
  if (!("Notification" in window) || Notification.permission !== "granted") return;
  try {
    const n = new Notification("Hearts Live", { body: text, tag: "hearts-turn" });
    n.onclick = () => {
      window.focus();
      n.close();
    };
  } catch {
    // Some browsers allow notifications only from a service worker; the title still changes.
  }
}
