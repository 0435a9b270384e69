// The client's picture of one room: rebuilt whole from any `view`, then kept up to date by
// applying events one at a time. No DOM here, so the rules of "what do we know now" stay in
// one place and the renderer only reads.

import { pointsIn, sortCards, suitOf } from "./cards.js";
import { t } from "./i18n.js";

function emptyGame() {
  return {
    phase: "deal",
    handNumber: 0,
    scores: [0, 0, 0, 0],
    history: [],
    winners: null,
    moonChooser: null,
    passDirection: null,
    passesDone: [false, false, false, false],
    trick: { leader: null, cards: [] },
    tricks: [],
    heartsBroken: false,
    turn: null,
    takenPoints: [0, 0, 0, 0],
    cardsLeft: [0, 0, 0, 0],
    hand: [],
    passed: null,
    received: null,
    legal: [],
  };
}

export function emptyRoom() {
  return {
    room: null,
    kind: null,
    status: "open",
    you: null,
    host: false,
    options: {},
    seats: [null, null, null, null],
    spectators: 0,
    gameNumber: 0,
    gameId: null,
    deciding: [],
    departures: [],
    handLog: [],
    game: null,
    prompt: null, // this seat's pending decision: {phase, legal, choices, clock}
    lastTrick: null, // the last completed trick: {leader, cards, winner, points, number}
    notes: [], // things the log shows that views do not keep (boots, moon choices…)
    awaySince: {}, // seat -> our estimate of the server time its player dropped
    autoBootAt: {}, // seat -> when the server boots it if nobody does
    ratings: null, // a rated game's rating changes, per seat, once posted
  };
}

/** A fresh model from a server view (join, resume, view answers). */
export function fromView(view, serverNow) {
  const m = emptyRoom();
  m.room = view.room;
  m.kind = view.kind;
  m.status = view.status;
  m.you = view.you;
  m.host = Boolean(view.host);
  m.options = view.options || {};
  m.seats = (view.seats || [null, null, null, null]).map((s) => (s ? { ...s } : null));
  m.spectators = view.spectators || 0;
  m.gameNumber = view.game_number || 0;
  m.gameId = m.gameNumber ? `${view.room}.${m.gameNumber}` : null;
  m.deciding = [...(view.deciding || [])];
  m.departures = [...(view.departures || [])];
  m.handLog = [...(view.hand_log || [])];
  m.seats.forEach((s, i) => {
    // The view does not say since when a seat is away; count from now (a boot may come late,
    // never early, which the server would refuse anyway).
    if (s && !s.bot && !s.connected) m.awaySince[i] = serverNow;
  });
  const g = view.game;
  if (g) {
    const game = emptyGame();
    Object.assign(game, {
      phase: g.phase,
      handNumber: g.hand_number,
      scores: [...g.scores],
      history: (g.history || []).map((h) => [...h]),
      winners: g.winners,
      moonChooser: g.moon_chooser,
      passDirection: g.pass_direction ?? null,
      passesDone: g.passes_done ? [...g.passes_done] : [false, false, false, false],
      trick: g.trick ? { leader: g.trick.leader, cards: [...g.trick.cards] } : { leader: null, cards: [] },
      tricks: (g.tricks || []).map((t) => ({ leader: t.leader, cards: [...t.cards], winner: t.winner })),
      heartsBroken: Boolean(g.hearts_broken),
      turn: g.turn ?? null,
      takenPoints: g.taken_points ? [...g.taken_points] : [0, 0, 0, 0],
      cardsLeft: g.hand_cards_left ? [...g.hand_cards_left] : [0, 0, 0, 0],
      hand: sortCards(g.hand || []),
      passed: g.passed || null,
      received: g.received || null,
      legal: g.legal || [],
    });
    m.game = game;
    const last = game.tricks[game.tricks.length - 1];
    if (last) m.lastTrick = { ...last, number: game.tricks.length, points: pointsIn(last.cards) };
    m.prompt = promptFromView(m);
  }
  return m;
}

function promptFromView(m) {
  const g = m.game;
  const you = m.you;
  if (you === null || you === undefined || m.status !== "playing" || !m.deciding.includes(you)) return null;
  const clock = m.seats[you]?.clock ?? null;
  if (g.phase === "passing" && !g.passed) return { phase: "passing", legal: [...g.hand], clock };
  if (g.phase === "playing" && g.turn === you) return { phase: "playing", legal: [...g.legal], clock };
  if (g.phase === "moon_choice" && g.moonChooser === you) {
    return { phase: "moon_choice", legal: [], choices: ["others_26", "shooter_minus_26"], clock };
  }
  return null;
}

const without = (list, items) => list.filter((x) => !items.includes(x));

function note(m, text, kind = "info") {
  m.notes.push({ text, kind, hand: m.game?.handNumber ?? 0 });
  if (m.notes.length > 200) m.notes.shift();
}

export const seatName = (m, seat) => m.seats[seat]?.name ?? t("seat.fallback", { n: seat + 1 });

/** The decision a seat has finished: its clock stops and it is no longer deciding. */
function decided(m, seat) {
  m.deciding = m.deciding.filter((s) => s !== seat);
  const s = m.seats[seat];
  if (s) {
    s.clock = null;
    s.out_of_time = false;
  }
  delete m.autoBootAt[seat];
  if (seat === m.you) m.prompt = null;
}

/**
 * Apply one event frame to the model (in place). Unknown events are ignored, so a newer
 * server never breaks an older page.
 */
export function applyEvent(m, ev, serverNow) {
  const g = m.game;
  switch (ev.event) {
    case "room_opened":
      m.options = ev.options || m.options;
      break;
    case "seated":
      m.seats[ev.seat] = {
        seat: ev.seat, name: ev.name, bot: Boolean(ev.bot), level: ev.level ?? null,
        connected: true, out_of_time: false, clock: null,
      };
      break;
    case "seat_freed":
      m.seats[ev.seat] = null;
      break;
    case "spectators":
      m.spectators = ev.count;
      break;
    case "connection": {
      const s = m.seats[ev.seat];
      if (s) s.connected = ev.connected;
      if (ev.connected) delete m.awaySince[ev.seat];
      else m.awaySince[ev.seat] = serverNow;
      break;
    }
    case "game_started":
      m.status = "playing";
      m.gameNumber = ev.number;
      m.gameId = ev.game;
      m.options = ev.options || m.options;
      m.game = emptyGame();
      m.handLog = [];
      m.departures = [];
      m.notes = [];
      m.ratings = null;
      m.lastTrick = null;
      m.prompt = null;
      m.deciding = [];
      break;
    case "hand_started": {
      const game = m.game || (m.game = emptyGame());
      Object.assign(game, {
        phase: ev.pass_direction === "none" ? "playing" : "passing",
        handNumber: ev.number,
        scores: [...ev.scores],
        passDirection: ev.pass_direction,
        passesDone: [false, false, false, false].map(() => ev.pass_direction === "none"),
        trick: { leader: null, cards: [] },
        tricks: [],
        heartsBroken: false,
        turn: null,
        takenPoints: [0, 0, 0, 0],
        cardsLeft: [13, 13, 13, 13],
        hand: [],
        passed: null,
        received: null,
        legal: [],
      });
      m.lastTrick = null;
      m.prompt = null;
      m.deciding = [];
      m.autoBootAt = {};
      m.seats.forEach((s) => s && ((s.out_of_time = false), (s.clock = null)));
      for (const seat of ev.absent || []) note(m, t("note.absent", { name: seatName(m, seat) }), "warn");
      break;
    }
    case "dealt":
      if (g) g.hand = sortCards(ev.cards);
      break;
    case "turn": {
      const s = m.seats[ev.seat];
      if (s) s.clock = ev.clock ?? null;
      if (g) {
        g.phase = ev.phase;
        if (ev.phase === "playing") {
          g.turn = ev.seat;
          m.deciding = [ev.seat];
        } else if (!m.deciding.includes(ev.seat)) {
          m.deciding = [...m.deciding, ev.seat];
        }
        if (ev.phase === "moon_choice") g.moonChooser = ev.seat;
      }
      break;
    }
    case "your_turn":
      m.prompt = { phase: ev.phase, legal: ev.legal || [], choices: ev.choices || null, clock: ev.clock ?? null };
      if (g && ev.phase === "playing") g.legal = ev.legal || [];
      break;
    case "pass_chosen":
      if (g) g.passesDone[ev.seat] = true;
      decided(m, ev.seat);
      break;
    case "passed":
      if (g) {
        g.passed = ev.cards;
        g.hand = without(g.hand, ev.cards);
      }
      m.prompt = null;
      break;
    case "received":
      if (g) {
        g.received = ev.cards;
        g.hand = sortCards(ev.hand);
      }
      break;
    case "card_played":
      if (g) {
        if (!g.trick.cards.length) g.trick.leader = ev.seat;
        g.trick.cards = [...g.trick.cards, ev.card];
        g.cardsLeft[ev.seat] = Math.max(0, g.cardsLeft[ev.seat] - 1);
        if (suitOf(ev.card) === "H") g.heartsBroken = true;
        if (ev.seat === m.you) {
          g.hand = without(g.hand, [ev.card]);
          g.legal = [];
        }
        g.turn = null;
      }
      decided(m, ev.seat);
      break;
    case "trick_won":
      if (g) {
        g.tricks.push({ leader: ev.leader, cards: ev.cards, winner: ev.seat });
        g.takenPoints[ev.seat] += ev.points;
        g.trick = { leader: ev.seat, cards: [] };
      }
      m.lastTrick = { leader: ev.leader, cards: ev.cards, winner: ev.seat, points: ev.points, number: ev.number };
      break;
    case "hand_over":
      m.handLog.push({
        hand: ev.hand, points: ev.points, scores: ev.scores, shooter: ev.shooter,
        pass_direction: ev.pass_direction, tricks: ev.tricks, revoke_call: ev.revoke_call,
      });
      if (g) {
        g.scores = [...ev.scores];
        g.history.push([...ev.points]);
        g.phase = "deal";
        g.turn = null;
      }
      if (ev.shooter !== null && ev.shooter !== undefined) note(m, t("note.moon", { name: seatName(m, ev.shooter) }), "good");
      m.prompt = null;
      m.deciding = [];
      m.seats.forEach((s) => s && (s.clock = null));
      break;
    case "moon_chosen":
      note(m, t(ev.timeout ? "note.moon_timeout" : ev.choice === "others_26" ? "note.moon_others" : "note.moon_minus", { name: seatName(m, ev.seat) }));
      decided(m, ev.seat);
      break;
    case "revoke_called":
      note(m, t(ev.guilty ? "note.revoke_guilty" : "note.revoke_innocent", { accuser: seatName(m, ev.accuser), accused: seatName(m, ev.accused) }), "warn");
      break;
    case "out_of_time": {
      const s = m.seats[ev.seat];
      if (s) s.out_of_time = true;
      m.autoBootAt[ev.seat] = ev.auto_boot_at;
      note(m, t("note.out_of_time", { name: seatName(m, ev.seat) }), "warn");
      break;
    }
    case "replaced": {
      const before = seatName(m, ev.seat);
      m.seats[ev.seat] = {
        seat: ev.seat, name: ev.name, bot: true, level: ev.level ?? null,
        connected: true, out_of_time: false, clock: null,
      };
      delete m.autoBootAt[ev.seat];
      delete m.awaySince[ev.seat];
      const why = { left: "note.left", booted: "note.booted", silent: "note.silent" }[ev.reason] || "note.silent";
      const by = ev.by !== null && ev.by !== undefined ? seatName(m, ev.by) : "?";
      note(m, t(why, { name: before, by }), "warn");
      m.departures.push({ seat: ev.seat, reason: ev.reason, hand: g?.handNumber ?? 0 });
      if (ev.seat === m.you) {
        // The seat never comes back to its player: from now on this page watches.
        m.you = null;
        m.prompt = null;
        if (g) {
          g.hand = [];
          g.legal = [];
        }
      }
      if (m.deciding.includes(ev.seat) && m.seats[ev.seat]) m.seats[ev.seat].clock = null;
      break;
    }
    case "ratings":
      // A rated game's result: each seat's rating before and after, and the change. It comes
      // once the store of record keeps the game, which may be after a rematch began.
      if (!ev.game || ev.game === m.gameId) m.ratings = ev.seats || null;
      break;
    case "game_over":
      m.status = "finished";
      if (g) {
        g.phase = "over";
        g.scores = [...ev.scores];
        g.winners = ev.winners;
      }
      m.prompt = null;
      m.deciding = [];
      break;
    default:
      break; // shuffle events go to the fair-deal check; unknown ones are ignored
  }
  return m;
}
