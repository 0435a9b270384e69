// Card names on the wire are rank then suit ("QS", "TH"); this module turns them into what a
// person reads: sorted hands, suit symbols, spoken names for screen readers.

export const SUIT_ORDER = "CDSH"; // clubs, diamonds, spades, hearts: the display order
const RANK_ORDER = "23456789TJQKA";
// Spoken names are in i18n.js (cardName), in the page's language.

export const SUITS = {
  C: { symbol: "♣", name: "clubs" },
  D: { symbol: "♦", name: "diamonds" },
  S: { symbol: "♠", name: "spades" },
  H: { symbol: "♥", name: "hearts" },
};


export const suitOf = (card) => card[1];

/** Display rank: "10" for T, the letter or digit otherwise. */
export const rankLabel = (card) => (card[0] === "T" ? "10" : card[0]);

/** The card's place in display order: clubs, diamonds, spades, hearts, each low to high. */
export const cardOrder = (card) => SUIT_ORDER.indexOf(card[1]) * 13 + RANK_ORDER.indexOf(card[0]);

export const sortCards = (cards) => [...cards].sort((a, b) => cardOrder(a) - cardOrder(b));

/** "Q♠": compact text for the log and hints. */
export const cardText = (card) => `${rankLabel(card)}${SUITS[card[1]].symbol}`;

/** Which card of `cards` (in play order) wins so far: the highest of the suit led. */
export function trickLeaderIndex(cards) {
  if (!cards.length) return -1;
  const led = suitOf(cards[0]);
  let best = 0;
  cards.forEach((card, i) => {
    if (suitOf(card) === led && RANK_ORDER.indexOf(card[0]) > RANK_ORDER.indexOf(cards[best][0])) best = i;
  });
  return best;
}

/** Points a set of cards is worth: a heart 1, the queen of spades 13. */
export const pointsIn = (cards) => cards.reduce((n, c) => n + (c === "QS" ? 13 : suitOf(c) === "H" ? 1 : 0), 0);

/**
 * The face of a card: a corner index (rank over suit, the part an overlapped card still shows)
 * and a large suit symbol. Colours come from the player's deck design (style.css, html[data-face]);
 * the symbol alone is enough for colour-blind players.
 */
export function cardFace(card, { small = false } = {}) {
  const face = document.createElement("span");
  face.className = `card-face suit-${suitOf(card)}${small ? " small" : ""}`;
  face.setAttribute("aria-hidden", "true");
  const rank = document.createElement("span");
  rank.className = "rank";
  rank.textContent = rankLabel(card);
  const suit = document.createElement("span");
  suit.className = "suit";
  suit.textContent = SUITS[suitOf(card)].symbol;
  face.append(rank, suit);
  if (!small) {
    const pip = document.createElement("span");
    pip.className = "pip";
    pip.textContent = SUITS[suitOf(card)].symbol;
    face.append(pip);
  }
  return face;
}
