/* The tree walks of ``walks.py`` compiled: the same algorithm, the same random numbers, the same
 * card for card (tests/core/bots/test_bots_panel.py holds them together). ``walks.py`` documents it;
 * this file only makes it about 90 times quicker. Cards are 0..51, suit * 13 + rank; the
 * queen of spades is 36, hearts 39..51. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HEARTS_MASK (((uint64_t)0x1FFF) << 39)
#define QUEEN 36
#define POINTS_MASK (HEARTS_MASK | ((uint64_t)1 << QUEEN))
#define SUIT_MASK(s) (((uint64_t)0x1FFF) << (13 * (s)))
#define MAX_REDEALS 32 /* deals drawn again for a doubted queen, at most, before one is kept */
#define POOL 4096 /* deals drawn once and weighed by the pass, when a prior is given */

typedef struct {
    uint64_t state;
} Rng;

static inline double rng_float(Rng *r) {
    /* splitmix64, 53 bits to a float in [0, 1): walks.py's _Rng does the same */
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* A node is small (its children are a list through ``next``) so that a big tree stays in the
 * caches better than with a table of 52 child slots per node. */
typedef struct {
    uint64_t kids; /* cards with a child */
    double reward, mean, spread; /* summed reward, its mean, 1 / sqrt(visits): kept at each
                                    credit so that scoring a child takes no division */
    int visits, avail;
    int first, next; /* first child, next sibling: 0 for none (the root is nobody's child) */
    int card;
} Node;

/* sqrt(log(n)) for the UCB term, computed once per process: the libm log alone was a tenth of
 * the time */
static double *root_log = NULL;
static int root_log_size = 0;

static int grow_root_logs(int n) {
    if (n <= root_log_size) return 0;
    double *t = realloc(root_log, sizeof(double) * (size_t)n);
    if (!t) return -1;
    for (int i = root_log_size; i < n; i++) t[i] = i ? sqrt(log((double)i)) : 0.0;
    root_log = t;
    root_log_size = n;
    return 0;
}

static inline int low_card(uint64_t m) { return __builtin_ctzll(m); }
static inline int high_card(uint64_t m) { return 63 - __builtin_clzll(m); }
static inline int count(uint64_t m) { return __builtin_popcountll(m); }

static int nth_card(uint64_t m, int n) {
    while (n--) m &= m - 1;
    return low_card(m);
}

static uint64_t strict_moves(uint64_t hand, uint64_t suit, int first_trick, int broken) {
    if (suit) {
        uint64_t legal = hand & suit;
        if (!legal) legal = first_trick ? ((hand & ~POINTS_MASK) ? hand & ~POINTS_MASK : hand) : hand;
        return legal;
    }
    if (first_trick) return 1;
    if (broken) return hand;
    return (hand & ~HEARTS_MASK) ? hand & ~HEARTS_MASK : hand;
}

/* The playout's card. policy 0 is the sparring partner's; policy 1 adds three pieces of table
 * sense every player has: no lead of the queen of spades or a spade above her while she is out,
 * no taking a clean trick with her when another card of the suit takes it, and the ace and king
 * of spades discarded before the hearts while she is out; policy 2 (strong's) also leads its
 * safest card: the lowest of a suit in which the fewest of the others' cards lie below it (a
 * lead nobody can duck under loses the trick), not the lowest of a random suit. ``live`` is
 * every card still in a hand. */
static int rollout_card(const int *trick, int n, uint64_t legal, uint64_t live, int policy, Rng *r,
                        double random_play) {
    if (rng_float(r) < random_play) return nth_card(legal, (int)(rng_float(r) * count(legal)));
    const uint64_t queen = (uint64_t)1 << QUEEN;
    const int queen_out = policy && (live & queen);
    if (!n && policy == 2) {
        /* on lead the legal cards are the whole hand but for hearts unbroken (not led then) */
        int fewest = 99, cands[4], k = 0;
        for (int s = 0; s < 4; s++) {
            uint64_t m = legal & SUIT_MASK(s), theirs = live & ~legal & SUIT_MASK(s);
            if (!m || !theirs || (queen_out && s == 2 && low_card(m) >= QUEEN)) continue;
            int low = low_card(m), below = count(theirs & (((uint64_t)1 << low) - 1));
            if (below < fewest) {
                fewest = below;
                k = 0;
            }
            if (below == fewest) cands[k++] = low;
        }
        if (k) return cands[(int)(rng_float(r) * k)];
    }
    if (!n) {
        int suits[4], k = 0;
        for (int s = 0; s < 4; s++)
            if (legal & SUIT_MASK(s) &&
                !(queen_out && s == 2 && low_card(legal & SUIT_MASK(2)) >= QUEEN))
                suits[k++] = s;
        if (!k)
            for (int s = 0; s < 4; s++)
                if (legal & SUIT_MASK(s)) suits[k++] = s;
        return low_card(legal & SUIT_MASK(suits[(int)(rng_float(r) * k)]));
    }
    uint64_t suit = SUIT_MASK(trick[0] / 13);
    uint64_t follow = legal & suit;
    if (follow) {
        int win = -1;
        for (int i = 0; i < n; i++)
            if ((((uint64_t)1 << trick[i]) & suit) && trick[i] > win) win = trick[i];
        uint64_t below = follow & (((uint64_t)1 << win) - 1);
        if (below) return high_card(below);
        if (n == 3) {
            int points = 0;
            for (int i = 0; i < n; i++)
                if (trick[i] >= 36 && (trick[i] == 36 || trick[i] >= 39)) points = 1;
            if (!points) {
                if (policy && (follow & ~queen)) return high_card(follow & ~queen);
                return high_card(follow);
            }
        }
        return low_card(follow);
    }
    if (legal >> QUEEN & 1) return QUEEN;
    const uint64_t over_queen = queen << 1 | queen << 2; /* the king and ace of spades */
    if (queen_out && (legal & over_queen)) return high_card(legal & over_queen);
    if (legal & HEARTS_MASK) return high_card(legal & HEARTS_MASK);
    int best = -1, rank = -1;
    for (int s = 0; s < 4; s++) {
        uint64_t m = legal & SUIT_MASK(s);
        if (m && high_card(m) - 13 * s > rank) {
            best = high_card(m);
            rank = best - 13 * s;
        }
    }
    return best;
}

static int trick_winner(int leader, const int *cards) {
    uint64_t suit = SUIT_MASK(cards[0] / 13);
    int best = 0;
    for (int i = 1; i < 4; i++)
        if ((((uint64_t)1 << cards[i]) & suit) && cards[i] > cards[best]) best = i;
    return (leader + best) & 3;
}

static void shuffle(int *cards, int n, Rng *r) {
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rng_float(r) * (i + 1));
        int t = cards[i];
        cards[i] = cards[j];
        cards[j] = t;
    }
}

typedef struct {
    uint64_t base[4];
    int others[3], need[3];
    uint64_t pattern[8];
    int pair_cards[52], n_pairs, rest_cards[52], n_rest;
} Sampler;

/* worlds.sample_world's placement, its fixed part done once by the caller */
static int sample(const Sampler *sp, uint64_t *hands, Rng *r) {
    int need[3] = {sp->need[0], sp->need[1], sp->need[2]};
    int cnt[8];
    for (int p = 0; p < 8; p++) cnt[p] = count(sp->pattern[p]);
    memcpy(hands, sp->base, sizeof(uint64_t) * 4);
    int pairs[52], rest[52];
    memcpy(pairs, sp->pair_cards, sizeof(int) * sp->n_pairs);
    memcpy(rest, sp->rest_cards, sizeof(int) * sp->n_rest);
    shuffle(pairs, sp->n_pairs, r);
    for (int j = 0; j < sp->n_pairs; j++) {
        int c = pairs[j];
        uint64_t bit = (uint64_t)1 << c;
        int p = (sp->pattern[3] & bit) ? 3 : (sp->pattern[5] & bit) ? 5 : 6;
        int a = p == 6 ? 1 : 0, b = p == 3 ? 1 : 2;
        cnt[p]--;
        int first = rng_float(r) * (need[a] + need[b]) < need[a] ? a : b;
        int order[2] = {first, a + b - first}, placed = -1;
        for (int t = 0; t < 2; t++) {
            int i = order[t];
            if (need[i] <= 0) continue;
            need[i]--;
            if (cnt[3] <= need[0] + need[1] && cnt[5] <= need[0] + need[2] &&
                cnt[6] <= need[1] + need[2]) {
                placed = i;
                break;
            }
            need[i]++;
        }
        if (placed < 0) return -1;
        hands[sp->others[placed]] |= bit;
    }
    shuffle(rest, sp->n_rest, r);
    int at = 0;
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < need[i]; k++) hands[sp->others[i]] |= (uint64_t)1 << rest[at++];
    return 0;
}

static int points_in(uint64_t m) { return count(m & HEARTS_MASK) + ((m >> QUEEN & 1) ? 13 : 0); }

/* The caller's clock: 1 to end the walks now, 0 to go on, -1 if it raised. */
static int stop_says(PyObject *stop) {
    PyObject *said = PyObject_CallNoArgs(stop);
    int done = said ? PyObject_IsTrue(said) : -1;
    Py_XDECREF(said);
    return done;
}

/* The deal of one walk from the weighed pool: the first whose running sum passes u * total. */
static const uint64_t *pool_deal(const uint64_t *pool, const double *cum, int n, Rng *r) {
    double u = rng_float(r) * cum[n - 1];
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (cum[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return pool + 4 * lo;
}

/* The root's card is settled by its walks' statistics: the most walked card (then the best
 * summed reward, then the highest card: walks.best_root's order) has the best mean reward and
 * leads every other walked root card by more than ``z`` standard errors of the difference of
 * the two means (each card's own sample variance; every card walked twice at least). walks.py's
 * _settled_by_confidence computes the same, in the same order. */
static int settled_by_confidence(const Node *nodes, const double *squares, double z,
                                 double tolerance) {
    int lead = 0;
    for (int at = nodes[0].first; at; at = nodes[at].next) {
        const Node *ch = &nodes[at];
        if (!lead) {
            lead = at;
            continue;
        }
        const Node *b = &nodes[lead];
        if (ch->visits > b->visits ||
            (ch->visits == b->visits &&
             (ch->reward > b->reward || (ch->reward == b->reward && ch->card > b->card))))
            lead = at;
    }
    if (!lead) return 0;
    const Node *b = &nodes[lead];
    if (b->visits < 2) return 0;
    double nb = (double)b->visits, mb = b->reward / nb;
    double vb = (squares[b->card] - b->reward * mb) / (nb - 1.0);
    if (vb < 0.0) vb = 0.0; /* (rounding, when every walk scored the same) */
    int others = 0;
    for (int at = nodes[0].first; at; at = nodes[at].next) {
        if (at == lead) continue;
        const Node *ch = &nodes[at];
        if (ch->visits < 2) return 0;
        double n = (double)ch->visits, m = ch->reward / n;
        double v = (squares[ch->card] - ch->reward * m) / (n - 1.0);
        if (v < 0.0) v = 0.0;
        double gap = mb - m;
        gap += tolerance;
        if (gap <= 0.0 || gap * gap <= z * z * (vb / nb + v / n)) return 0;
        others++;
    }
    return others > 0;
}

static PyObject *walk(PyObject *self, PyObject *args) {
    /* (sampler, start, me, legal, iterations, seed, explore, random_play, moon, stop, batch,
     * settle, policy, doubt[, prior]) -> (stats, a row per root card; this seat's points
     * summed over every walk, the moon rule applied); stop (None or a callable)
     * is asked every batch walks whether to end early; every settle walks (0: never) the walks
     * end once the most walked card's lead is more than the walks left; policy picks the
     * playout's card policy (rollout_card); doubt (None or four weights, one a seat) makes a
     * deal that gives the queen of spades to a seat that much less likely: a deal is kept with
     * chance doubt[holder] / max(doubt), else dealt again (MAX_REDEALS times at most).
     * prior (None, or four played masks and 224 weights, seat * 56 + suit * 14 + length): the
     * walks then draw min(POOL, iterations) deals first, weigh each by the doubt of its queen's
     * holder and the weights of the other seats' suit lengths (played cards counted), and each
     * walk takes one of them with chance in proportion to its weight (pass_prior.py).
     * confidence (0: never) and min_walks: at each look of settle, once min_walks walks are
     * done, the walks also end when the most walked card (then the best reward, then the
     * highest card) has the best mean reward and leads every other root card's mean by more
     * than confidence standard errors of the difference (settled_by_confidence). */
    PyObject *sampler_t, *start_t, *moon_t, *stop, *doubt_t, *prior_t = Py_None;
    int batch, settle, policy;
    int me, iterations, min_walks = 0;
    unsigned long long legal, seed;
    double explore, random_play, confidence = 0.0, tolerance = 0.0;
    if (!PyArg_ParseTuple(args, "OOiKiKddOOiiiO|Odid", &sampler_t, &start_t, &me, &legal,
                          &iterations, &seed, &explore, &random_play, &moon_t, &stop, &batch,
                          &settle, &policy, &doubt_t, &prior_t, &confidence, &min_walks,
                          &tolerance))
        return NULL;
    double prior[4][4][14];
    uint64_t played[4] = {0, 0, 0, 0};
    int weighing = prior_t != Py_None;
    if (weighing) {
        PyObject *played_t, *weights_t;
        if (!PyArg_ParseTuple(prior_t, "OO", &played_t, &weights_t)) return NULL;
        for (int s = 0; s < 4; s++) played[s] = PyLong_AsUnsignedLongLong(PyTuple_GetItem(played_t, s));
        for (int i = 0; i < 224; i++)
            prior[i / 56][i / 14 % 4][i % 14] = PyFloat_AsDouble(PyTuple_GetItem(weights_t, i));
        if (PyErr_Occurred()) return NULL;
    }
    double doubt[4] = {1.0, 1.0, 1.0, 1.0}, doubt_max = 1.0;
    int doubting = doubt_t != Py_None;
    if (doubting) {
        doubt_max = 0.0;
        for (int s = 0; s < 4; s++) {
            doubt[s] = PyFloat_AsDouble(PyTuple_GetItem(doubt_t, s));
            if (doubt[s] > doubt_max) doubt_max = doubt[s];
        }
        if (PyErr_Occurred()) return NULL;
    }
    Sampler sp;
    memset(&sp, 0, sizeof sp);
    PyObject *base, *others, *need, *pattern;
    if (!PyArg_ParseTuple(sampler_t, "OOOO", &base, &others, &need, &pattern)) return NULL;
    for (int i = 0; i < 4; i++) sp.base[i] = PyLong_AsUnsignedLongLong(PyTuple_GetItem(base, i));
    for (int i = 0; i < 3; i++) {
        sp.others[i] = (int)PyLong_AsLong(PyTuple_GetItem(others, i));
        sp.need[i] = (int)PyLong_AsLong(PyTuple_GetItem(need, i));
    }
    for (int p = 0; p < 8; p++) sp.pattern[p] = PyLong_AsUnsignedLongLong(PyTuple_GetItem(pattern, p));
    if (PyErr_Occurred()) return NULL;
    for (uint64_t m = sp.pattern[3] | sp.pattern[5] | sp.pattern[6]; m; m &= m - 1)
        sp.pair_cards[sp.n_pairs++] = low_card(m);
    for (uint64_t m = sp.pattern[7]; m; m &= m - 1) sp.rest_cards[sp.n_rest++] = low_card(m);
    PyObject *taken_t, *trick_t;
    int leader0, turn0, broken0, first0, tricks_left0;
    if (!PyArg_ParseTuple(start_t, "OOiiiii", &taken_t, &trick_t, &leader0, &turn0, &broken0, &first0,
                          &tricks_left0))
        return NULL;
    uint64_t taken0[4];
    for (int i = 0; i < 4; i++) taken0[i] = PyLong_AsUnsignedLongLong(PyTuple_GetItem(taken_t, i));
    int trick0[4], n0 = (int)PyTuple_Size(trick_t);
    for (int i = 0; i < n0 && i < 4; i++) trick0[i] = (int)PyLong_AsLong(PyTuple_GetItem(trick_t, i));
    int moon[4][4];
    for (int s = 0; s < 4; s++)
        for (int t = 0; t < 4; t++) moon[s][t] = (int)PyLong_AsLong(PyTuple_GetItem(moon_t, 4 * s + t));
    if (PyErr_Occurred()) return NULL;

    Node *nodes = iterations >= 0 ? malloc(sizeof(Node) * (size_t)(iterations + 1)) : NULL;
    if (!nodes || grow_root_logs(iterations + 2) < 0) {
        free(nodes);
        return PyErr_NoMemory();
    }
    int n_nodes = 1;
    memset(&nodes[0], 0, sizeof(Node));
    int own_moons[52] = {0};
    double root_squares[64] = {0.0}; /* per root card: its walks' squared rewards, summed */
    double own_points = 0.0; /* this seat's points summed over every walk, moon rule applied */
    Rng rng = {seed};
    int failed = 0;
    int n_pool = 0;
    uint64_t *pool = NULL;
    double *cum = NULL;
    if (weighing && iterations > 0) {
        int size = iterations < POOL ? iterations : POOL;
        pool = malloc(sizeof(uint64_t) * 4 * (size_t)size);
        cum = malloc(sizeof(double) * (size_t)size);
        if (!pool || !cum) {
            free(nodes);
            free(pool);
            free(cum);
            return PyErr_NoMemory();
        }
        double total = 0.0;
        while (n_pool < size) {
            if (stop != Py_None && n_pool && n_pool % batch == 0) {
                int done = stop_says(stop);
                if (done < 0) {
                    free(nodes);
                    free(pool);
                    free(cum);
                    return NULL;
                }
                if (done) break;
            }
            uint64_t *h = pool + 4 * n_pool;
            if (sample(&sp, h, &rng) < 0) {
                failed = 1;
                break;
            }
            double w = 1.0;
            for (int s = 0; s < 4; s++) {
                if (s == me) continue;
                if (doubting && (h[s] >> QUEEN & 1)) w *= doubt[s] / doubt_max;
                uint64_t held = h[s] | played[s];
                for (int su = 0; su < 4; su++) w *= prior[s][su][count(held & SUIT_MASK(su))];
            }
            total += w;
            cum[n_pool++] = total;
        }
    }
    for (int it = 0; !failed && it < iterations; it++) {
        if (settle && it && it % settle == 0) {
            /* the most walked card can no longer be caught: the rest would not change it */
            int best = 0, second = 0;
            for (int at = nodes[0].first; at; at = nodes[at].next) {
                int v = nodes[at].visits;
                if (v > best) {
                    second = best;
                    best = v;
                } else if (v > second) {
                    second = v;
                }
            }
            if (best - second > iterations - it) break;
            if (confidence > 0.0 && it >= min_walks &&
                settled_by_confidence(nodes, root_squares, confidence, tolerance))
                break;
        }
        if (stop != Py_None && it && it % batch == 0) {
            int done = stop_says(stop);
            if (done < 0) {
                free(nodes);
                free(pool);
                free(cum);
                return NULL;
            }
            if (done) break;
        }
        uint64_t hands[4], taken[4];
        if (n_pool) {
            memcpy(hands, pool_deal(pool, cum, n_pool, &rng), sizeof hands);
        } else if (sample(&sp, hands, &rng) < 0) {
            failed = 1;
            break;
        }
        for (int tries = 0; doubting && !n_pool && tries < MAX_REDEALS; tries++) {
            int holder = -1;
            for (int s = 0; s < 4; s++)
                if (hands[s] >> QUEEN & 1) holder = s;
            if (holder < 0 || rng_float(&rng) * doubt_max < doubt[holder]) break;
            if (sample(&sp, hands, &rng) < 0) {
                failed = 1;
                break;
            }
        }
        if (failed) break;
        memcpy(taken, taken0, sizeof taken);
        int trick[4], n = n0;
        memcpy(trick, trick0, sizeof(int) * 4);
        int leader = leader0, seat = turn0, broken = broken0, first_trick = first0;
        int tricks_left = tricks_left0;
        int node = 0, expanding = 1, depth = 0, root_card = -1;
        int path_node[60], path_seat[60];
        while (seat >= 0) {
            uint64_t hand = hands[seat];
            uint64_t moves = strict_moves(hand, n ? SUIT_MASK(trick[0] / 13) : 0, first_trick, broken);
            if (seat == me && node == 0) moves &= legal;
            int card;
            if (!expanding) {
                uint64_t live = policy ? hands[0] | hands[1] | hands[2] | hands[3] : 0;
                card = (moves & (moves - 1))
                           ? rollout_card(trick, n, moves, live, policy, &rng, random_play)
                           : low_card(moves);
            } else {
                Node *nd = &nodes[node];
                uint64_t untried = moves & ~nd->kids;
                int child;
                if (untried) {
                    card = nth_card(untried, (int)(rng_float(&rng) * count(untried)));
                    child = n_nodes++; /* (the pool holds every node the walks can add) */
                    Node *ch = &nodes[child];
                    memset(ch, 0, sizeof(Node));
                    ch->card = card;
                    ch->next = nd->first;
                    nd->first = child;
                    nd->kids |= (uint64_t)1 << card;
                    expanding = 0;
                    ch->avail += 1;
                } else {
                    /* every legal card has a child: the best UCB1 score, the lowest card on a
                     * tie (the order walks.py scores them in) */
                    double best_score = -INFINITY;
                    card = 64;
                    child = 0;
                    for (int at = nd->first; at; at = nodes[at].next) {
                        Node *ch = &nodes[at];
                        if (!(moves >> ch->card & 1)) continue;
                        ch->avail += 1;
                        double score = ch->mean + explore * root_log[ch->avail] * ch->spread;
                        if (score > best_score || (score == best_score && ch->card < card)) {
                            best_score = score;
                            card = ch->card;
                            child = at;
                        }
                    }
                }
                if (node == 0) root_card = card;
                path_node[depth] = child;
                path_seat[depth] = seat;
                depth++;
                node = child;
            }
            hands[seat] = hand ^ ((uint64_t)1 << card);
            trick[n++] = card;
            if (card >= 39) broken = 1;
            if (n < 4) {
                seat = (seat + 1) & 3;
                continue;
            }
            leader = seat = trick_winner(leader, trick);
            taken[seat] |= ((uint64_t)1 << trick[0]) | ((uint64_t)1 << trick[1]) |
                           ((uint64_t)1 << trick[2]) | ((uint64_t)1 << trick[3]);
            n = 0;
            first_trick = 0;
            if (!--tricks_left) seat = -1;
        }
        int pts[4], shooter = -1;
        for (int s = 0; s < 4; s++) {
            pts[s] = points_in(taken[s]);
            if (pts[s] == 26) shooter = s;
        }
        if (shooter >= 0)
            for (int s = 0; s < 4; s++) pts[s] = moon[shooter][s];
        if (shooter == me && root_card >= 0) own_moons[root_card]++;
        own_points += pts[me];
        if (depth) {
            double r = pts[path_seat[0]] / 26.0;
            root_squares[nodes[path_node[0]].card] += r * r;
        }
        for (int d = 0; d < depth; d++) {
            Node *nd = &nodes[path_node[d]];
            nd->visits += 1;
            nd->reward -= pts[path_seat[d]] / 26.0;
            nd->mean = nd->reward / nd->visits;
            nd->spread = 1.0 / sqrt((double)nd->visits);
        }
    }
    PyObject *out = NULL;
    if (!failed) {
        out = PyList_New(0);
        int of_card[64] = {0};
        for (int at = nodes[0].first; at; at = nodes[at].next) of_card[nodes[at].card] = at;
        for (uint64_t m = nodes[0].kids; out && m; m &= m - 1) {
            int c = low_card(m);
            Node *ch = &nodes[of_card[c]];
            PyObject *row = Py_BuildValue("(iidi)", c, ch->visits, ch->reward, own_moons[c]);
            if (!row || PyList_Append(out, row) < 0) {
                Py_XDECREF(row);
                Py_CLEAR(out);
                break;
            }
            Py_DECREF(row);
        }
    } else {
        PyErr_SetString(PyExc_ValueError, "no deal fits the facts");
    }
    free(nodes);
    free(pool);
    free(cum);
    if (!out) return NULL;
    return Py_BuildValue("(Nd)", out, own_points);
}

static PyMethodDef methods[] = {
    {"walk", walk, METH_VARARGS, "ISMCTS tree walks; see server/core/bots/walks.py."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_walks", NULL, -1, methods};

PyMODINIT_FUNC PyInit__walks(void) { return PyModule_Create(&module); }
