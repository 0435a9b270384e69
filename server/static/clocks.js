// Seat clocks. The server sends absolute times on its own clock (since, grace_until, bank,
// bank_out_at); we only need our estimate of the server's "now" to show, for every seat with
// a decision to make, the grace left, then the bank running down, then "out of time".

/**
 * What a seat's clock shows at server time `now`:
 * {mode: "grace" | "bank" | "out" | "idle", seconds, fraction (0..1 of that phase left)}.
 */
export function clockReading(clock, now, outOfTime = false) {
  if (outOfTime) return { mode: "out", seconds: 0, fraction: 0 };
  if (!clock) return { mode: "idle", seconds: 0, fraction: 0 };
  if (clock.out_of_time_at) return { mode: "out", seconds: 0, fraction: 0 };
  if (now < clock.grace_until) {
    const span = Math.max(0.001, clock.grace_until - clock.since);
    const left = clock.grace_until - now;
    return { mode: "grace", seconds: left, fraction: Math.min(1, left / span) };
  }
  const left = Math.max(0, clock.bank_out_at - now);
  const span = Math.max(0.001, clock.bank);
  // The server grants a small lag credit before calling time, so 0 may linger a moment.
  return { mode: left > 0 ? "bank" : "out", seconds: left, fraction: Math.min(1, left / span) };
}

const fmt = (seconds) => {
  const s = Math.ceil(seconds);
  return s >= 60 ? `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}` : `${s}s`;
};

/** The words on a clock: also the accessible name, so nothing depends on colour alone. */
export function clockText(reading) {
  switch (reading.mode) {
    case "grace":
      return `${fmt(reading.seconds)} to decide`;
    case "bank":
      return `time bank ${fmt(reading.seconds)}`;
    case "out":
      return "out of time";
    default:
      return "";
  }
}

/**
 * Draw a clock into `el` (a .clock element with a .clock-bar > span and a .clock-text).
 * Cheap enough to run several times a second for four seats.
 */
export function drawClock(el, reading) {
  el.dataset.mode = reading.mode;
  el.hidden = reading.mode === "idle";
  const text = el.querySelector(".clock-text");
  const bar = el.querySelector(".clock-bar > span");
  const words = clockText(reading);
  if (text && text.textContent !== words) text.textContent = words;
  if (bar) bar.style.width = `${Math.round(reading.fraction * 100)}%`;
}

// A stopwatch drawn in SVG: emoji fonts are not everywhere (headless browsers, older systems).
export const CLOCK_ICON =
  '<svg class="clock-icon" aria-hidden="true" viewBox="0 0 16 16" width="14" height="14"><circle cx="8" cy="9" r="6" fill="none" stroke="currentColor" stroke-width="1.8"/><path d="M8 9V5.5M6 1.5h4" stroke="currentColor" stroke-width="1.8" stroke-linecap="round"/></svg>';

/** The markup drawClock expects. */
export function clockElement() {
  const el = document.createElement("div");
  el.className = "clock";
  el.hidden = true;
  el.innerHTML = `${CLOCK_ICON}<span class="clock-text"></span><span class="clock-bar" aria-hidden="true"><span></span></span>`;
  return el;
}
