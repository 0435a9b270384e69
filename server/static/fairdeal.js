// The fair deal, version 1, in the browser: the seat's secret and commitment, the deck
// derivation, and the audit verifier. The specification is docs/fair-deal.md; this is a port
// of protocol/shuffle.py and protocol/verify.py, tested against protocol/vectors/*.json.
//
// Hashing goes through WebCrypto when the page is a secure context, and through the small
// pure-JS sha256.js otherwise (plain http on a LAN address has no crypto.subtle), so a deal
// can be checked wherever the client runs.

import { hmacSha256Sync, sha256Sync } from "./sha256.js";

const DOMAIN = new TextEncoder().encode("hearts-deal-v1");
const SECRET_SIZE = 32;
const SEATS = 4;
const HAND_SIZE = 13;
const DECK_SIZE = 52;
const TRICKS = 13;
const FIRST_BLOCKS = 7; // 51 draws need 204 bytes: 7 blocks of 32, with spare words
const MAX_HAND = 0xffffffff;
const MAX_GAME_BYTES = 0xffff;
export const PASS_DIRECTIONS = ["left", "right", "across", "none"];
const SEAT_KINDS = ["human", "bot", "absent"];
const RANKS = "23456789TJQKA";
const SUITS = "CDSH";

// --- bytes -----------------------------------------------------------------------------------

export function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function fromHex(hex) {
  if (typeof hex !== "string" || hex.length % 2 || /[^0-9a-fA-F]/.test(hex)) {
    throw new Error(`not hex: ${String(hex).slice(0, 40)}`);
  }
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

const bytesOf = (value) => (typeof value === "string" ? fromHex(value) : value);

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const ascii = (s) => new TextEncoder().encode(s);
const u8 = (n) => new Uint8Array([n]);
function u32(n) {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n, false);
  return out;
}

function equalBytes(a, b) {
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// --- cards -----------------------------------------------------------------------------------

export const cardName = (n) => RANKS[n % 13] + SUITS[Math.floor(n / 13)];

export function parseCard(name) {
  if (typeof name !== "string" || name.length !== 2) throw new Error(`not a card name: ${name}`);
  const rank = RANKS.indexOf(name[0]);
  const suit = SUITS.indexOf(name[1]);
  if (rank < 0 || suit < 0) throw new Error(`not a card name: ${name}`);
  return suit * 13 + rank;
}

const suitOf = (card) => Math.floor(card / 13);
const byNumber = (a, b) => a - b;
const names = (cards) => [...cards].sort(byNumber).map(cardName).join(", ");

// --- hashing backends ------------------------------------------------------------------------

let forceFallback = false;

/** Tests only: true makes every hash use the pure-JS code even where WebCrypto exists. */
export function useFallbackCrypto(flag) {
  forceFallback = Boolean(flag);
}

/** Which backend hashes now: "webcrypto" or "js". */
export function cryptoBackend() {
  return subtle() ? "webcrypto" : "js";
}

function subtle() {
  return !forceFallback && globalThis.crypto && globalThis.crypto.subtle ? globalThis.crypto.subtle : null;
}

async function sha256(data) {
  const s = subtle();
  return s ? new Uint8Array(await s.digest("SHA-256", data)) : sha256Sync(data);
}

/** HMAC-SHA-256 with one key for many messages: the key is imported once. */
async function hmacWith(key) {
  const s = subtle();
  if (!s) return async (msg) => hmacSha256Sync(key, msg);
  const k = await s.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return async (msg) => new Uint8Array(await s.sign("HMAC", k, msg));
}

async function hmac(key, msg) {
  return (await hmacWith(key))(msg);
}

// --- the derivation --------------------------------------------------------------------------

/** ctx = "hearts-deal-v1" ‖ u16(len(g)) ‖ g ‖ u32(hand), g the UTF-8 bytes of the game id. */
export function dealContext(gameId, hand) {
  if (typeof gameId !== "string") throw new Error("game id must be a string");
  const g = new TextEncoder().encode(gameId); // bytes, not characters, are counted
  if (g.length > MAX_GAME_BYTES) throw new Error(`game id is ${g.length} bytes; at most ${MAX_GAME_BYTES}`);
  if (!Number.isInteger(hand) || hand < 1 || hand > MAX_HAND) {
    throw new Error(`hand number must be 1..${MAX_HAND}, got ${hand}`);
  }
  return concat(DOMAIN, new Uint8Array([g.length >> 8, g.length & 0xff]), g, u32(hand));
}

/** A fresh 32-byte seat secret from the browser's CSPRNG, as hex. */
export function makeSecret() {
  const bytes = new Uint8Array(SECRET_SIZE);
  crypto.getRandomValues(bytes);
  return toHex(bytes);
}

function checkSecret(secret, what) {
  if (!(secret instanceof Uint8Array) || secret.length !== SECRET_SIZE) {
    throw new Error(`${what} must be exactly ${SECRET_SIZE} bytes`);
  }
}

function checkSeat(seat) {
  if (!Number.isInteger(seat) || seat < 0 || seat >= SEATS) throw new Error(`seat must be 0..3, got ${seat}`);
}

/** c_j = SHA-256(ctx ‖ "seat" ‖ u8(j) ‖ r_j), as hex: what a human seat sends with `commit`. */
export async function seatCommitment(gameId, hand, seat, secret) {
  return toHex(await seatCommitmentBytes(dealContext(gameId, hand), seat, bytesOf(secret)));
}

async function seatCommitmentBytes(ctx, seat, secret) {
  checkSeat(seat);
  checkSecret(secret, `seat ${seat}'s secret`);
  return sha256(concat(ctx, ascii("seat"), u8(seat), secret));
}

/** C_S = SHA-256(ctx ‖ "srv" ‖ S). ctx and S as bytes or hex; returns bytes. */
export async function serverCommitment(ctx, serverSecret) {
  const s = bytesOf(serverSecret);
  checkSecret(s, "server secret");
  return sha256(concat(bytesOf(ctx), ascii("srv"), s));
}

/** b_j = HMAC(S, ctx ‖ "bot" ‖ u8(j)): a bot's secret, fixed by C_S. */
export async function botSecret(ctx, serverSecret, seat) {
  checkSeat(seat);
  return hmac(bytesOf(serverSecret), concat(bytesOf(ctx), ascii("bot"), u8(seat)));
}

/** a_j = HMAC(S, ctx ‖ "absent" ‖ u8(j)): the stand-in for a seat that was not in time. */
export async function absentSecret(ctx, serverSecret, seat) {
  checkSeat(seat);
  return hmac(bytesOf(serverSecret), concat(bytesOf(ctx), ascii("absent"), u8(seat)));
}

/** Block `counter` of key's stream: HMAC(key, ctx ‖ u32(counter)). */
export async function keyStreamBlock(ctx, key, counter) {
  return hmac(bytesOf(key), concat(bytesOf(ctx), u32(counter)));
}

/** One Fisher-Yates shuffle of deck in place, driven by key's HMAC stream from counter 0. */
async function shuffleWith(deck, ctx, key) {
  checkSecret(key, "shuffle key");
  const mac = await hmacWith(key);
  const first = await Promise.all(
    Array.from({ length: FIRST_BLOCKS }, (_, c) => mac(concat(ctx, u32(c)))),
  );
  let stream = concat(...first);
  let counter = FIRST_BLOCKS;
  let at = 0;
  const draw = async () => {
    if (at + 4 > stream.length) {
      // Only after a rejection (rarer than 1 in 10^7 per draw): extend the stream.
      stream = concat(stream.subarray(at), await mac(concat(ctx, u32(counter++))));
      at = 0;
    }
    const x = new DataView(stream.buffer, stream.byteOffset + at, 4).getUint32(0, false);
    at += 4;
    return x;
  };
  for (let i = DECK_SIZE - 1; i >= 1; i--) {
    const n = i + 1;
    // The largest multiple of n that fits in 32 bits: x mod n is uniform below it.
    const limit = 2 ** 32 - (2 ** 32 % n);
    let x = await draw();
    while (x >= limit) x = await draw();
    const j = x % n;
    [deck[i], deck[j]] = [deck[j], deck[i]];
  }
}

/**
 * The dealt deck (card numbers): 0..51 shuffled by S, then by seat 0's … seat 3's secret.
 * ctx, serverSecret and each seat secret may be bytes or hex. `onShuffle(k, deck)`, if given,
 * sees a copy of the deck after each of the five shuffles (the vectors pin those too).
 */
export async function deriveDeck(ctx, serverSecret, seatSecrets, onShuffle = null) {
  const c = bytesOf(ctx);
  const keys = [bytesOf(serverSecret), ...seatSecrets.map(bytesOf)];
  if (keys.length !== SEATS + 1) throw new Error(`need exactly ${SEATS} seat secrets`);
  const deck = Array.from({ length: DECK_SIZE }, (_, i) => i);
  for (let k = 0; k < keys.length; k++) {
    await shuffleWith(deck, c, keys[k]);
    if (onShuffle) onShuffle(k, deck.slice());
  }
  return deck;
}

/** Seat s gets deck[13s … 13s+12]; each hand as card names in display order. */
export function dealHands(deck) {
  return [0, 1, 2, 3].map((s) =>
    deck.slice(HAND_SIZE * s, HAND_SIZE * (s + 1)).sort(byNumber).map(cardName),
  );
}

export const passDirectionFor = (hand) => PASS_DIRECTIONS[(hand - 1) % 4];

export function passTarget(seat, direction) {
  const shift = { left: 1, right: 3, across: 2 }[direction];
  return shift === undefined ? null : (seat + shift) % SEATS;
}

// --- the audit record's shape (protocol/audit.py parse_audit) ---------------------------------

class FormatError extends Error {}

const fail = (where, message) => new FormatError(`${where}: ${message}`);

function describe(value) {
  if (value === null || value === undefined) return "null";
  if (typeof value === "boolean") return "a boolean";
  if (typeof value === "number") return `the number ${value}`;
  if (typeof value === "string") return `the string '${value.slice(0, 40)}'`;
  if (Array.isArray(value)) return `a list of ${value.length}`;
  return "an object";
}

function object(value, where, keys, optional = []) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw fail(where, `expected an object, got ${describe(value)}`);
  }
  const missing = keys.find((k) => !(k in value));
  if (missing) throw fail(where, `missing field '${missing}'`);
  // Unknown fields are refused, not ignored: a newer format must say so with "v".
  const extra = Object.keys(value).filter((k) => !keys.includes(k) && !optional.includes(k)).sort();
  if (extra.length) throw fail(where, `unknown field '${extra[0]}'`);
  return value;
}

function int(value, where, low, high) {
  if (!Number.isInteger(value)) throw fail(where, `expected a whole number, got ${describe(value)}`);
  if (value < low || value > high) throw fail(where, `expected ${low}..${high}, got ${value}`);
  return value;
}

function hex32(value, where) {
  if (typeof value !== "string" || value.length !== 2 * SECRET_SIZE) {
    throw fail(where, `expected ${2 * SECRET_SIZE} hex digits, got ${describe(value)}`);
  }
  try {
    return fromHex(value);
  } catch {
    throw fail(where, `not hex: '${value}'`);
  }
}

function list(value, where, low, high = low) {
  if (!Array.isArray(value)) throw fail(where, `expected a list, got ${describe(value)}`);
  if (value.length < low || value.length > high) {
    const want = low === high ? `${low}` : `${low} to ${high}`;
    throw fail(where, `expected ${want} entries, got ${value.length}`);
  }
  return value;
}

function cards(value, where, low, high = low) {
  return list(value, where, low, high).map((name, k) => {
    try {
      return parseCard(name);
    } catch {
      throw fail(`${where}[${k}]`, `not a card name: ${JSON.stringify(name)}`);
    }
  });
}

const AUDIT_KEYS = [
  "v", "game", "hand", "server_commitment", "server_secret", "seats", "deal", "pass_direction",
  "passes", "tricks",
];

function parseAudit(record) {
  const obj = object(record, "audit", AUDIT_KEYS);
  if (obj.v !== 1) throw fail("v", `unsupported audit version ${JSON.stringify(obj.v)}; this verifier reads 1`);
  if (typeof obj.game !== "string") throw fail("game", `expected a string, got ${describe(obj.game)}`);
  const hand = int(obj.hand, "hand", 1, MAX_HAND);
  try {
    dealContext(obj.game, hand);
  } catch (e) {
    throw fail("game", e.message);
  }
  const seats = list(obj.seats, "seats", SEATS).map((s, j) => {
    const where = `seats[${j}]`;
    const seat = object(s, where, ["seat", "kind", "commitment", "secret"]);
    if (int(seat.seat, `${where}.seat`, 0, SEATS - 1) !== j) {
      throw fail(`${where}.seat`, `seats must be listed in order, expected ${j}`);
    }
    if (!SEAT_KINDS.includes(seat.kind)) {
      throw fail(`${where}.kind`, `expected one of ${SEAT_KINDS.join(", ")}, got '${seat.kind}'`);
    }
    const commitment = seat.commitment === null ? null : hex32(seat.commitment, `${where}.commitment`);
    if (seat.kind === "human" && commitment === null) {
      throw fail(`${where}.commitment`, "a human seat must have its commitment");
    }
    if (seat.kind === "bot" && commitment !== null) {
      throw fail(`${where}.commitment`, "a bot seat has no commitment (C_S covers it): null");
    }
    return { seat: j, kind: seat.kind, commitment, secret: hex32(seat.secret, `${where}.secret`) };
  });
  const deal = list(obj.deal, "deal", SEATS).map((c, s) => cards(c, `deal[${s}]`, HAND_SIZE));
  const direction = obj.pass_direction;
  if (!PASS_DIRECTIONS.includes(direction)) {
    throw fail("pass_direction", `expected one of ${PASS_DIRECTIONS.join(", ")}, got '${direction}'`);
  }
  let passes = null;
  if (direction === "none") {
    if (obj.passes !== null) throw fail("passes", "must be null when pass_direction is none");
  } else {
    if (obj.passes === null) throw fail("passes", `missing: pass_direction is ${direction}`);
    passes = list(obj.passes, "passes", SEATS).map((c, s) => cards(c, `passes[${s}]`, 3));
  }
  const rawTricks = list(obj.tricks, "tricks", 0, TRICKS);
  const tricks = rawTricks.map((t, k) => {
    const where = `tricks[${k}]`;
    const trick = object(t, where, ["leader", "cards"]);
    const leader = int(trick.leader, `${where}.leader`, 0, SEATS - 1);
    // Only the last trick may be short: a revoke call ends the hand at once.
    const last = k === rawTricks.length - 1;
    return { leader, cards: cards(trick.cards, `${where}.cards`, last ? 1 : SEATS, SEATS) };
  });
  return {
    game: obj.game,
    hand,
    serverCommitment: hex32(obj.server_commitment, "server_commitment"),
    serverSecret: hex32(obj.server_secret, "server_secret"),
    seats,
    deal,
    passDirection: direction,
    passes,
    tricks,
  };
}

const OWN_KEYS = ["seat", "secret", "dealt", "received", "passed", "server_commitment", "commitments"];

function parseOwn(record) {
  const obj = object(record, "own", OWN_KEYS.slice(0, 2), OWN_KEYS.slice(2));
  const present = (k) => obj[k] !== undefined && obj[k] !== null;
  return {
    seat: int(obj.seat, "own.seat", 0, SEATS - 1),
    secret: hex32(obj.secret, "own.secret"),
    dealt: present("dealt") ? cards(obj.dealt, "own.dealt", HAND_SIZE) : null,
    received: present("received") ? cards(obj.received, "own.received", 0, 3) : null,
    passed: present("passed") ? cards(obj.passed, "own.passed", 0, 3) : null,
    serverCommitment: present("server_commitment") ? hex32(obj.server_commitment, "own.server_commitment") : null,
    commitments: present("commitments")
      ? list(obj.commitments, "own.commitments", SEATS).map((c, j) =>
          c === null ? null : hex32(c, `own.commitments[${j}]`))
      : null,
  };
}

// --- the verifier (protocol/verify.py verify_audit) --------------------------------------------

const short = (bytes) => (bytes === null ? "none" : `${toHex(bytes).slice(0, 16)}…`);
const sameSet = (a, b) => a.size === b.size && [...a].every((x) => b.has(x));
const minus = (a, b) => new Set([...a].filter((x) => !b.has(x)));

/**
 * The problems with an audit record, as plain sentences; [] means verified. A malformed
 * record is one problem ("malformed audit record: …"). `own` is this seat's own record
 * ({seat, secret} and optionally dealt, received, passed, server_commitment, commitments); a
 * malformed own record is the caller's error and throws.
 */
export async function verifyAudit(audit, own = null) {
  const mine = own === null || own === undefined ? null : parseOwn(own);
  let parsed;
  try {
    parsed = parseAudit(audit);
  } catch (e) {
    if (e instanceof FormatError) return [`malformed audit record: ${e.message}`];
    throw e;
  }
  return verifyParsed(parsed, mine);
}

async function verifyParsed(audit, own) {
  const problems = [];
  const ctx = dealContext(audit.game, audit.hand);
  const S = audit.serverSecret;

  // 1. Every commitment opens; bots' and stand-ins' secrets are the ones S derives.
  if (!equalBytes(await serverCommitment(ctx, S), audit.serverCommitment)) {
    problems.push("the server's secret does not match its commitment");
  }
  const used = [];
  for (const s of audit.seats) {
    const j = s.seat;
    if (s.kind === "human") {
      if (!equalBytes(await seatCommitmentBytes(ctx, j, s.secret), s.commitment)) {
        problems.push(`seat ${j}'s secret does not match its commitment`);
      }
      used.push(s.secret);
    } else if (s.kind === "bot") {
      const expected = await botSecret(ctx, S, j);
      if (!equalBytes(s.secret, expected)) {
        problems.push(`seat ${j} is a bot, but its secret is not the one the server's secret gives`);
      }
      used.push(expected);
    } else {
      const expected = await absentSecret(ctx, S, j);
      if (!equalBytes(s.secret, expected)) {
        problems.push(
          `seat ${j} is marked absent, but its secret is not the stand-in the server's secret gives`,
        );
      }
      used.push(expected);
    }
  }

  // 2. The deal re-derives from the secrets as they should be (so a bad secret cannot hide
  //    behind a deal made to match it), and gives each card to exactly one seat.
  const deck = await deriveDeck(ctx, S, used);
  const derived = [0, 1, 2, 3].map((s) => new Set(deck.slice(HAND_SIZE * s, HAND_SIZE * (s + 1))));
  const dealt = audit.deal.map((c) => new Set(c));
  for (let j = 0; j < SEATS; j++) {
    const missing = minus(derived[j], dealt[j]);
    if (missing.size) {
      problems.push(
        `the deal does not re-derive: seat ${j} should hold ${names(missing)}` +
          ` (the record has ${names(minus(dealt[j], derived[j]))} instead)`,
      );
    }
  }
  const owner = new Map();
  audit.deal.forEach((hand, j) => {
    for (const card of hand) {
      if (owner.has(card)) {
        const who = owner.get(card) === j ? "twice" : `to seat ${owner.get(card)} and seat ${j}`;
        problems.push(`the deal gives ${cardName(card)} ${who}`);
      } else {
        owner.set(card, j);
      }
    }
  });

  // 3. The passes: the hand's direction; three distinct cards each from the passer's deal.
  const expectedDirection = passDirectionFor(audit.hand);
  if (audit.passDirection !== expectedDirection) {
    problems.push(`hand ${audit.hand} should pass ${expectedDirection}, the record says ${audit.passDirection}`);
  }
  const passed = [0, 1, 2, 3].map(() => new Set());
  if (audit.passes) {
    audit.passes.forEach((c, j) => {
      for (const card of c) {
        if (passed[j].has(card)) problems.push(`seat ${j} passed ${cardName(card)} twice`);
        else if (!dealt[j].has(card)) problems.push(`seat ${j} passed ${cardName(card)} which it was not dealt`);
        passed[j].add(card);
      }
    });
  }

  // 4. The play: each card from the player's hand at that moment, leaders in order.
  const held = dealt.map((d) => new Set(d));
  const receivedFrom = [null, null, null, null];
  if (audit.passes) {
    for (let j = 0; j < SEATS; j++) for (const c of passed[j]) held[j].delete(c);
    for (let j = 0; j < SEATS; j++) {
      const target = passTarget(j, audit.passDirection);
      for (const c of passed[j]) held[target].add(c);
      receivedFrom[target] = j;
    }
  }
  problems.push(...checkTricks(audit, held, passed));

  if (own) problems.push(...(await checkOwn(audit, own, derived, receivedFrom, ctx)));
  return problems;
}

function checkTricks(audit, held, passed) {
  const problems = [];
  const TWO_CLUBS = 0;
  const playedIn = new Map(); // card -> [trick number, seat]
  const holder2C = held.findIndex((h) => h.has(TWO_CLUBS));
  let previousWinner = null; // [seat, card]
  audit.tricks.forEach((trick, k) => {
    const number = k + 1;
    if (number === 1) {
      if (holder2C >= 0 && trick.leader !== holder2C) {
        problems.push(`trick 1 was led by seat ${trick.leader}, but seat ${holder2C} held 2C`);
      }
      if (trick.cards[0] !== TWO_CLUBS) problems.push(`trick 1 was opened with ${cardName(trick.cards[0])}, not 2C`);
    } else if (previousWinner && trick.leader !== previousWinner[0]) {
      problems.push(
        `trick ${number} was led by seat ${trick.leader}, but seat ${previousWinner[0]} ` +
          `won trick ${number - 1} with ${cardName(previousWinner[1])}`,
      );
    }
    trick.cards.forEach((card, m) => {
      const seat = (trick.leader + m) % SEATS;
      if (held[seat].has(card)) {
        held[seat].delete(card);
        playedIn.set(card, [number, seat]);
        return;
      }
      let why;
      if (playedIn.has(card)) {
        const [earlier, by] = playedIn.get(card);
        why = `which ${by === seat ? "it" : `seat ${by}`} had already played in trick ${earlier}`;
      } else if (passed[seat].has(card)) {
        why = `which it had passed to seat ${passTarget(seat, audit.passDirection)}`;
      } else {
        why = "which it did not hold";
      }
      problems.push(`seat ${seat} played ${cardName(card)} in trick ${number} ${why}`);
    });
    if (trick.cards.length === SEATS) {
      const led = suitOf(trick.cards[0]);
      // Same suit means the same block of 13, so the highest number is the highest rank.
      const best = Math.max(...trick.cards.filter((c) => suitOf(c) === led));
      previousWinner = [(trick.leader + trick.cards.indexOf(best)) % SEATS, best];
    }
  });
  if (audit.tricks.length === TRICKS && audit.tricks.every((t) => t.cards.length === SEATS)) {
    held.forEach((h, seat) => {
      if (h.size) problems.push(`after trick 13 seat ${seat} still held ${names(h)}`);
    });
  }
  return problems;
}

async function checkOwn(audit, own, derived, receivedFrom, ctx) {
  const problems = [];
  const j = own.seat;
  const record = audit.seats[j];
  if (!equalBytes(record.secret, own.secret)) {
    if (record.kind === "absent") {
      const hasMine =
        record.commitment !== null &&
        equalBytes(record.commitment, await seatCommitmentBytes(ctx, j, own.secret));
      problems.push(
        `the audit marks seat ${j} (you) absent and used a stand-in, not your secret` +
          (hasMine ? ", though it has your commitment" : ""),
      );
    } else if (record.kind === "bot") {
      problems.push(`the audit says seat ${j} (you) was a bot, and did not use your secret`);
    } else {
      problems.push(`the audit's secret for seat ${j} is not your secret`);
    }
  }
  if (own.serverCommitment && !equalBytes(own.serverCommitment, audit.serverCommitment)) {
    problems.push(
      `the server's commitment in the audit (${short(audit.serverCommitment)}) is not ` +
        `the one you were shown (${short(own.serverCommitment)})`,
    );
  }
  if (own.commitments) {
    own.commitments.forEach((shown, seat) => {
      const recorded = audit.seats[seat].commitment;
      const same = shown === null ? recorded === null : equalBytes(shown, recorded);
      if (!same) {
        problems.push(
          `seat ${seat}'s commitment in the audit (${short(recorded)}) is not the ` +
            `one you were shown (${short(shown)})`,
        );
      }
    });
  }
  if (own.dealt) {
    const mine = new Set(own.dealt);
    if (!sameSet(mine, derived[j])) {
      problems.push(
        `you were dealt ${names(minus(mine, derived[j]))}, but the secrets deal seat ${j} ` +
          `${names(minus(derived[j], mine))} instead`,
      );
    }
  }
  const passes = audit.passes;
  if (own.passed) {
    const mine = new Set(own.passed);
    const theirs = new Set(passes ? passes[j] : []);
    if (!sameSet(mine, theirs)) {
      problems.push(`you passed ${names(mine) || "nothing"}, the record says ${names(theirs) || "nothing"}`);
    }
  }
  if (own.received) {
    const mine = new Set(own.received);
    const giver = receivedFrom[j];
    const theirs = new Set(passes && giver !== null ? passes[giver] : []);
    if (!sameSet(mine, theirs)) {
      problems.push(`you received ${names(mine) || "nothing"}, the record says ${names(theirs) || "nothing"}`);
    }
  }
  return problems;
}
