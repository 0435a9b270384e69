// Talking to the server: the guest identity over HTTP, and one WebSocket (JSON subprotocol)
// that survives drops. The protocol is docs/protocol.md; what this module adds is the
// bookkeeping every client needs: request ids, the room's last seq, resume after a reconnect,
// and an estimate of the server's clock. (Pings are WebSocket control frames: the browser
// answers them.)

const GUEST_KEY = "hearts.guest";
const SUBPROTOCOL = "hearts.v1.json";

export class CommandError extends Error {
  constructor(code, message, frame = null) {
    super(message || code);
    this.code = code;
    this.frame = frame;
  }
}

// --- the guest identity (kept in localStorage so a reload or an invite link keeps the seat) ---

export function savedGuest() {
  try {
    const guest = JSON.parse(localStorage.getItem(GUEST_KEY) || "null");
    return guest && guest.token ? guest : null;
  } catch {
    return null;
  }
}

export function forgetGuest() {
  localStorage.removeItem(GUEST_KEY);
}

export async function newGuest(name) {
  const response = await fetch("/api/guest", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name }),
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new CommandError(body.code || "http_error", body.message || `HTTP ${response.status}`);
  localStorage.setItem(GUEST_KEY, JSON.stringify(body));
  return body;
}

// --- the socket -----------------------------------------------------------------------------

// Commands whose answer carries a view: events that arrive while one is pending are held, so
// a view cannot overwrite newer events (the server may send those before the answer).
const VIEW_COMMANDS = new Set(["join", "resume", "open_room"]);

/**
 * One logical connection to the server. Events: "event" (detail: the event frame, in seq
 * order, never twice), "view" (detail: a full view to rebuild from), "status" (detail:
 * "connecting" | "online" | "reconnecting"), "frame" (every frame: quick-play messages are
 * not room events), "lost-room" (the room is gone), "auth-failed" (the token was refused).
 */
export class Connection extends EventTarget {
  constructor(token, url = null) {
    super();
    this.token = token;
    this.url = url || `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
    this.ws = null;
    this.nextId = 1;
    this.pending = new Map();
    this.room = null;
    this.seq = 0;
    this.offset = 0; // server clock minus ours, in seconds
    this.bestRtt = Infinity;
    this.identity = null;
    this.held = null; // events held while a view-bearing command is in flight
    this.closing = false;
    this.attempt = 0;
    this.status = "connecting";
    this.pingTimer = null;
    this.opened = null; // resolves when authenticated
  }

  /** The server's clock now (seconds since the epoch), from our clock and the offset. */
  serverNow() {
    return Date.now() / 1000 + this.offset;
  }

  /** Connect and authenticate; resolves with the auth answer (player, name). */
  connect() {
    this.closing = false;
    this.opened = new Promise((resolve, reject) => this._open(resolve, reject));
    return this.opened;
  }

  close() {
    this.closing = true;
    clearInterval(this.pingTimer);
    if (this.ws) this.ws.close(1000, "bye");
  }

  /** The socket URL names the room we enter (known, or from a /r/CODE link), so the load
   *  balancer can send every seat of a room to the same node; any node still serves it. */
  _socketUrl() {
    const linked = location.pathname.match(/^\/r\/([A-Za-z0-9_-]{4,40})$/);
    const room = this.room || (linked && linked[1]);
    return room ? `${this.url}?room=${encodeURIComponent(room)}` : this.url;
  }

  _setStatus(status) {
    this.status = status;
    this.dispatchEvent(new CustomEvent("status", { detail: status }));
  }

  _open(resolve, reject) {
    this._setStatus(this.attempt ? "reconnecting" : "connecting");
    const ws = new WebSocket(this._socketUrl(), SUBPROTOCOL);
    this.ws = ws;
    let authed = false;
    ws.onopen = async () => {
      try {
        const reply = await this.request("auth", { token: this.token });
        authed = true;
        this.identity = { player: reply.player, name: reply.name };
        this._sample(Date.now() / 1000, Date.now() / 1000, reply.server_time, true);
        this.attempt = 0;
        this._setStatus("online");
        this._syncClock();
        clearInterval(this.pingTimer);
        this.pingTimer = setInterval(() => this._syncClock(1), 30000);
        if (this.room) await this._resume();
        resolve(reply);
      } catch (err) {
        reject(err);
        if (err.code === "bad_token") {
          // The server no longer accepts this identity (a new signing key): retrying is
          // pointless, the player needs a new guest identity.
          this.closing = true;
          this.dispatchEvent(new CustomEvent("auth-failed", { detail: err }));
        }
        ws.close();
      }
    };
    ws.onmessage = (msg) => this._onFrame(msg.data);
    ws.onclose = (ev) => {
      clearInterval(this.pingTimer);
      for (const { reject: fail } of this.pending.values()) {
        fail(new CommandError("disconnected", "The connection dropped."));
      }
      this.pending.clear();
      this.held = null;
      if (this.closing) return;
      if (!authed && this.attempt === 0) reject(new CommandError("unreachable", `Cannot reach the server (${ev.code}).`));
      // Back off gently: 0.5 s, 1 s, 2 s … at most 5 s; a draining node (1012) is expected.
      const delay = Math.min(5000, 500 * 2 ** this.attempt);
      this.attempt += 1;
      this._setStatus("reconnecting");
      setTimeout(() => {
        if (!this.closing) this.opened = new Promise((res, rej) => this._open(res, rej)).catch(() => {});
      }, delay);
    };
  }

  /** Send a command; resolves with the `ok` frame or rejects with a CommandError. */
  request(type, fields = {}) {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      return Promise.reject(new CommandError("offline", "Not connected to the server right now."));
    }
    const id = this.nextId++;
    const viewBearing = VIEW_COMMANDS.has(type);
    if (viewBearing) this.held = this.held || [];
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, viewBearing });
      ws.send(JSON.stringify({ type, id, ...fields }));
    });
  }

  /** Enter a room (join, or open one); remembers it so a reconnect resumes it. */
  async enter(type, fields) {
    const reply = await this.request(type, fields);
    this.room = reply.room;
    return reply;
  }

  forgetRoom() {
    this.room = null;
    this.seq = 0;
  }

  /** Ask the room again for what this page has missed (docs/protocol.md: after
   * `outcome_unknown`, `resume` shows whether the move was made). */
  async catchUp() {
    if (this.room) await this._resume();
  }

  async _resume() {
    try {
      await this.request("resume", { room: this.room, seq: this.seq });
    } catch (err) {
      if (err.code === "room_not_found") {
        this.room = null;
        this.dispatchEvent(new CustomEvent("lost-room", { detail: err }));
      }
    }
  }

  _onFrame(data) {
    let frame;
    try {
      frame = JSON.parse(data);
    } catch {
      return;
    }
    this.dispatchEvent(new CustomEvent("frame", { detail: frame }));
    if (frame.type === "event") {
      if (this.held) this.held.push(frame);
      else this._event(frame);
      return;
    }
    if (frame.type !== "ok" && frame.type !== "error") return;
    const waiter = this.pending.get(frame.re);
    if (!waiter) return;
    this.pending.delete(frame.re);
    if (frame.type === "ok" && waiter.viewBearing && frame.room) this.room = frame.room;
    if (frame.type === "ok" && frame.view) {
      this.seq = frame.view.seq;
      this.dispatchEvent(new CustomEvent("view", { detail: frame.view }));
    }
    if (waiter.viewBearing && ![...this.pending.values()].some((w) => w.viewBearing)) {
      // In seq order: a live event can come in before the ones a resume fills in below it.
      const held = (this.held || []).sort((a, b) => a.seq - b.seq);
      this.held = null;
      for (const ev of held) this._event(ev);
    }
    if (frame.type === "ok") waiter.resolve(frame);
    else waiter.reject(new CommandError(frame.code, frame.message, frame));
  }

  _event(frame) {
    if (frame.room !== this.room) return;
    if (frame.seq <= this.seq) return; // already in the view, or seen before a resume
    this.seq = frame.seq;
    this.dispatchEvent(new CustomEvent("event", { detail: frame }));
  }

  /** A few `ping` commands; the fastest round trip gives the best offset estimate. */
  async _syncClock(rounds = 3) {
    for (let i = 0; i < rounds; i++) {
      const sent = Date.now() / 1000;
      try {
        const reply = await this.request("ping", { t: sent });
        this._sample(sent, Date.now() / 1000, reply.server_time);
      } catch {
        return;
      }
    }
  }

  _sample(sent, received, serverTime, rough = false) {
    if (typeof serverTime !== "number") return;
    const rtt = received - sent;
    // The auth answer only gives a rough first guess; later pings replace it.
    if (rough && this.bestRtt !== Infinity) return;
    if (!rough && rtt > this.bestRtt * 1.5 + 0.05) return;
    if (!rough) this.bestRtt = Math.min(this.bestRtt, rtt);
    this.offset = serverTime - (sent + received) / 2;
  }
}
