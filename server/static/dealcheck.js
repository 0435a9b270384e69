// This seat's part in every hand's commit-reveal shuffle, and the check of each hand's audit.
//
// shuffle_commit -> draw a secret, record C_S, send `commit`; commitments -> record the list,
// then (only then) send `reveal`; dealt / passed / received -> record what we held; hand_audit ->
// verify the record in the browser against what we kept (docs/fair-deal.md "A seat's own
// record"). Records live in sessionStorage so a reload mid-hand can still hold the audit to
// account. A watcher (no seat) still checks each audit's internal consistency.

import { t } from "./i18n.js";
import { makeSecret, seatCommitment, verifyAudit } from "./fairdeal.js";

const STORE_KEY = "hearts.deal-records";
const RESULTS_KEY = "hearts.deal-results";
const OWN_FIELDS = ["seat", "secret", "dealt", "received", "passed", "server_commitment", "commitments"];

export class DealCheck extends EventTarget {
  constructor(conn) {
    super();
    this.conn = conn;
    this.records = load();
    this.current = null; // key of the hand being shuffled or played
    this.results = new Map(); // hand number -> {ok, problems, checked: "own" | "record"}
    this.game = null;
  }

  /** Switch to another game's results (kept for this tab, so a reload still shows them). */
  reset(gameId) {
    if (gameId === this.game) return;
    this.game = gameId;
    this.results = new Map(loadResults(gameId));
    this.current = null;
    this._changed();
  }

  /**
   * Check the audits of finished hands this page has no result for (it joined or reloaded
   * after them), fetched with the `audit` command. Without our own notes for those hands this
   * checks that each record is consistent with itself.
   */
  async catchUp(handNumbers) {
    for (const hand of handNumbers) {
      if (this.results.has(hand)) continue;
      let reply;
      try {
        reply = await this.conn.request("audit", { hand });
      } catch (err) {
        if (err.code === "unknown_type" || err.code === "offline") return; // no audits here
        continue;
      }
      if (reply.audit && !this.results.has(hand)) await this._verify(reply.audit, hand);
    }
  }

  /** Feed every room event here; `seat` is this page's seat now (null when watching). */
  async onEvent(ev, seat) {
    try {
      switch (ev.event) {
        case "shuffle_commit":
          this.reset(ev.game);
          if (seat === null || seat === undefined) return;
          await this._commit(ev, seat);
          break;
        case "commitments":
          await this._reveal(ev);
          break;
        case "dealt":
          this._record("dealt", ev.cards);
          break;
        case "passed":
          this._record("passed", ev.cards);
          break;
        case "received":
          this._record("received", ev.cards);
          break;
        case "hand_audit":
          await this._verify(ev.audit ?? ev, ev.hand);
          break;
        default:
      }
    } catch (err) {
      // Never let the fair-deal bookkeeping break the game; say so instead.
      this.dispatchEvent(new CustomEvent("trouble", { detail: t("deal.trouble", { error: err.message || err }) }));
    }
  }

  /**
   * Arriving while a shuffle waits (a quick-play match, a reload, a reconnect given a fresh
   * view): the view's `shuffle` says what is pending, so this seat can still take its part.
   */
  async fromView(view) {
    const pending = view.shuffle;
    const seat = view.you;
    if (!pending || seat === null || seat === undefined) return;
    const record = this.records[`${pending.game}#${pending.hand}`];
    if (pending.phase === "commit" && !pending.committed?.[seat]) {
      await this.onEvent({ event: "shuffle_commit", ...pending }, seat);
    } else if (pending.phase === "reveal" && record && !record.revealed && !pending.revealed?.[seat]) {
      this.current = `${pending.game}#${pending.hand}`;
      await this.onEvent({ event: "commitments", ...pending }, seat);
    }
  }

  async _commit(ev, seat) {
    const key = `${ev.game}#${ev.hand}`;
    const secret = makeSecret();
    // Record C_S before anything else: it is what makes the later check meaningful.
    const record = { seat, secret, server_commitment: ev.server_commitment };
    record.mine = await seatCommitment(ev.game, ev.hand, seat, secret);
    this.records[key] = record;
    this.current = key;
    save(this.records);
    await this.conn.request("commit", { commitment: record.mine });
  }

  async _reveal(ev) {
    const key = `${ev.game}#${ev.hand}`;
    const record = this.records[key];
    if (!record || record.revealed) return;
    record.commitments = ev.commitments;
    save(this.records);
    if (ev.commitments?.[record.seat] !== record.mine) {
      // The list does not show our commitment: revealing would let our secret be used
      // against a list we never agreed to. Stay out; the audit will mark us absent.
      this.dispatchEvent(new CustomEvent("trouble", { detail: t("deal.not_listed") }));
      return;
    }
    record.revealed = true;
    save(this.records);
    await this.conn.request("reveal", { secret: record.secret });
  }

  _record(field, cards) {
    const record = this.current && this.records[this.current];
    if (!record) return;
    record[field] = cards;
    save(this.records);
  }

  async _verify(audit, hand) {
    const key = `${audit.game}#${audit.hand}`;
    const record = this.records[key];
    let own = null;
    if (record && record.revealed) {
      own = {};
      for (const f of OWN_FIELDS) if (record[f] !== undefined) own[f] = record[f];
    }
    const problems = await verifyAudit(audit, own);
    this.results.set(hand ?? audit.hand, { ok: problems.length === 0, problems, checked: own ? "own" : "record" });
    if (audit.game === this.game) saveResults(this.game, this.results);
    if (this.current === key) this.current = null;
    delete this.records[key];
    save(this.records);
    this._changed();
  }

  _changed() {
    this.dispatchEvent(new CustomEvent("change"));
  }
}

function load() {
  try {
    return JSON.parse(sessionStorage.getItem(STORE_KEY) || "{}") || {};
  } catch {
    return {};
  }
}

function save(records) {
  // Keep only a few hands: an abandoned game's records should not pile up.
  const keys = Object.keys(records);
  for (const k of keys.slice(0, Math.max(0, keys.length - 8))) delete records[k];
  try {
    sessionStorage.setItem(STORE_KEY, JSON.stringify(records));
  } catch {
    /* storage full or disabled: the check still works for this page's life */
  }
}

function loadResults(gameId) {
  try {
    const saved = JSON.parse(sessionStorage.getItem(RESULTS_KEY) || "null");
    return saved && saved.game === gameId ? saved.results : [];
  } catch {
    return [];
  }
}

function saveResults(gameId, results) {
  try {
    sessionStorage.setItem(RESULTS_KEY, JSON.stringify({ game: gameId, results: [...results.entries()] }));
  } catch {
    /* see save() */
  }
}
