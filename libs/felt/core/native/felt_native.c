/*
 * felt._native: poker hand evaluation and Monte Carlo equity in C.
 *
 * Cards are ints 0..51 = rank * 4 + suit (ranks 0..12 = 2..A, suits 0..3 =
 * c, d, h, s), the encoding of felt.cards.  Internally a set of cards is a
 * 64-bit mask with one 16-bit lane per suit: card (rank, suit) is bit
 * 16 * suit + rank.  Adding cards is OR, collision testing is AND, and each
 * lane is the 13-bit rank mask of that suit, which is all the evaluator needs.
 *
 * Hand values (uint32, higher is better, equal means an exact tie):
 *
 *     bits 26..29  category (0 high card .. 8 straight flush)
 *     bits 13..25  "major" 13-bit rank mask: the ranks that make the
 *                  combination (pair rank, both pair ranks, trips rank,
 *                  straight top rank, the five flush/high-card ranks, ...)
 *     bits  0..12  "minor" 13-bit rank mask: kickers, or the pair of a
 *                  full house
 *
 * Within one category the masks hold the same number of bits, so comparing
 * them as integers compares the ranks from the highest down, which is the
 * poker rule.  The wheel (A-2-3-4-5) has the five as its top rank.
 *
 * The evaluator works on any number of cards up to 7; with fewer than five
 * it reports only the rank-count categories (pair, two pair, trips, quads),
 * which the draw-equity opponent model uses to constrain kept cards.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

typedef uint64_t hand_t;

#define CATEGORY_SHIFT 26
#define MAJOR_SHIFT 13
#define RANK_MASK 0x1fffu

enum {
    HIGH_CARD = 0,
    ONE_PAIR,
    TWO_PAIR,
    TRIPS,
    STRAIGHT,
    FLUSH,
    FULL_HOUSE,
    QUADS,
    STRAIGHT_FLUSH,
    N_CATEGORIES
};

/* popcount of 13-bit rank masks; a table so the build needs no -mpopcnt. */
static uint8_t POPCOUNT13[8192];

static void init_tables(void) {
    for (int m = 0; m < 8192; m++) {
        int n = 0;
        for (int b = m; b; b &= b - 1) n++;
        POPCOUNT13[m] = (uint8_t)n;
    }
}

static inline hand_t card_bit(int c) {
    return (hand_t)1 << (((c & 3) << 4) + (c >> 2));
}

/* Highest set bit of m, or 0 when m is 0 (branch-free). */
static inline uint32_t top_bit(uint32_t m) {
    return ((uint32_t)1 << (31 - __builtin_clz(m | 1u))) & m;
}

/* The n highest set bits of m. */
static inline uint32_t keep_top(uint32_t m, int n) {
    for (int extra = POPCOUNT13[m] - n; extra > 0; extra--) m &= m - 1;
    return m;
}

/* Top rank bit of the best straight in rank mask m, or 0. */
static inline uint32_t straight_top(uint32_t m) {
    /* x bit 0 is the ace playing low, x bit j (j >= 1) is rank j - 1. */
    uint32_t x = (m << 1) | (m >> 12);
    uint32_t runs = x & (x >> 1) & (x >> 2) & (x >> 3) & (x >> 4);
    /* A run starting at x bit i tops out at rank i + 3. */
    return top_bit(runs) << 3;
}

static inline uint32_t make_value(uint32_t category, uint32_t major, uint32_t minor) {
    return (category << CATEGORY_SHIFT) | (major << MAJOR_SHIFT) | minor;
}

/* Value of the best five-card hand within the (at most 7) cards of h. */
static inline uint32_t eval_mask(hand_t h) {
    uint32_t c = (uint32_t)h & RANK_MASK;
    uint32_t d = (uint32_t)(h >> 16) & RANK_MASK;
    uint32_t e = (uint32_t)(h >> 32) & RANK_MASK;
    uint32_t s = (uint32_t)(h >> 48) & RANK_MASK;

    /* With at most 7 cards a flush excludes quads and full houses (they
     * would need 8 cards), so a flush decides the hand at once. */
    uint32_t flush = 0;
    if (POPCOUNT13[c] >= 5) flush = c;
    else if (POPCOUNT13[d] >= 5) flush = d;
    else if (POPCOUNT13[e] >= 5) flush = e;
    else if (POPCOUNT13[s] >= 5) flush = s;
    if (flush) {
        uint32_t top = straight_top(flush);
        if (top) return make_value(STRAIGHT_FLUSH, top, 0);
        return make_value(FLUSH, keep_top(flush, 5), 0);
    }

    uint32_t any = c | d | e | s;
    uint32_t four = c & d & e & s;
    if (four) return make_value(QUADS, four, top_bit(any & ~four));

    uint32_t three = (c & d & (e | s)) | (e & s & (c | d));
    uint32_t pairs = ((c & d) | (e & s) | ((c | d) & (e | s))) & ~three;
    uint32_t trips = top_bit(three);
    if (trips) {
        uint32_t rest = (three & ~trips) | pairs;
        if (rest) return make_value(FULL_HOUSE, trips, top_bit(rest));
    }
    uint32_t top = straight_top(any);
    if (top) return make_value(STRAIGHT, top, 0);
    if (trips) return make_value(TRIPS, trips, keep_top(any & ~trips, 2));
    if (pairs) {
        if (pairs & (pairs - 1)) {
            uint32_t two = keep_top(pairs, 2);
            return make_value(TWO_PAIR, two, top_bit(any & ~two));
        }
        return make_value(ONE_PAIR, pairs, keep_top(any & ~pairs, 3));
    }
    return make_value(HIGH_CARD, keep_top(any, 5), 0);
}

static inline int hand_size(hand_t h) {
    return POPCOUNT13[h & RANK_MASK] + POPCOUNT13[(h >> 16) & RANK_MASK] +
           POPCOUNT13[(h >> 32) & RANK_MASK] + POPCOUNT13[(h >> 48) & RANK_MASK];
}

/* ------------------------------------------------------------------------ */
/* PRNG: xoshiro256** seeded through splitmix64.                             */

typedef struct {
    uint64_t s[4];
} rng_t;

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void rng_seed(rng_t *r, uint64_t seed) {
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t rng_next(rng_t *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Unbiased integer in [0, n), n >= 1 (Lemire's multiply-and-reject). */
static inline uint32_t rng_below(rng_t *r, uint32_t n) {
    uint64_t m = (rng_next(r) >> 32) * (uint64_t)n;
    uint32_t low = (uint32_t)m;
    if (low < n) {
        uint32_t threshold = (uint32_t)(-n) % n;
        while (low < threshold) {
            m = (rng_next(r) >> 32) * (uint64_t)n;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

/* A card uniformly drawn from pool (bits), avoiding the cards in used. */
static inline hand_t draw_card(rng_t *r, const hand_t *pool, uint32_t n, hand_t used) {
    for (;;) {
        hand_t b = pool[rng_below(r, n)];
        if (!(b & used)) return b;
    }
}

/* ------------------------------------------------------------------------ */
/* Argument helpers.                                                         */

/* Reads card codes from a bytes-like object; fills *mask, returns count or -1. */
static Py_ssize_t read_cards(PyObject *obj, const char *what, uint8_t *out,
                             Py_ssize_t max, hand_t *mask) {
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE) < 0) return -1;
    Py_ssize_t n = view.len;
    if (n > max) {
        PyBuffer_Release(&view);
        PyErr_Format(PyExc_ValueError, "%s: at most %zd cards, got %zd", what, max, n);
        return -1;
    }
    const uint8_t *p = (const uint8_t *)view.buf;
    hand_t m = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (p[i] > 51) {
            PyBuffer_Release(&view);
            PyErr_Format(PyExc_ValueError, "%s: %d is not a card (0..51)", what, (int)p[i]);
            return -1;
        }
        hand_t b = card_bit(p[i]);
        if (m & b) {
            PyBuffer_Release(&view);
            PyErr_Format(PyExc_ValueError, "%s: card %d appears twice", what, (int)p[i]);
            return -1;
        }
        m |= b;
        if (out) out[i] = p[i];
    }
    PyBuffer_Release(&view);
    *mask = m;
    return n;
}

static int overlap_error(hand_t a, hand_t b, const char *what_a, const char *what_b) {
    if (a & b) {
        PyErr_Format(PyExc_ValueError, "%s and %s share a card", what_a, what_b);
        return -1;
    }
    return 0;
}

static int read_samples_seed(PyObject *samples_obj, PyObject *seed_obj, Py_ssize_t *samples,
                             uint64_t *seed) {
    *samples = PyLong_AsSsize_t(samples_obj);
    if (*samples == -1 && PyErr_Occurred()) return -1;
    if (*samples < 1) {
        PyErr_SetString(PyExc_ValueError, "samples must be at least 1");
        return -1;
    }
    if (!PyLong_Check(seed_obj)) {
        PyErr_SetString(PyExc_TypeError, "seed must be an int");
        return -1;
    }
    *seed = PyLong_AsUnsignedLongLongMask(seed_obj);
    if (*seed == (uint64_t)-1 && PyErr_Occurred()) return -1;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* evaluate / evaluate_many                                                  */

PyDoc_STRVAR(evaluate_doc,
             "evaluate(c1, c2, c3, c4, c5[, c6[, c7]]) -> int\n\n"
             "Value of the best five-card hand among 5 to 7 distinct cards (ints\n"
             "0..51). Higher is better; equal values are exact ties.");

static PyObject *py_evaluate(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs < 5 || nargs > 7) {
        PyErr_Format(PyExc_TypeError, "evaluate() takes 5 to 7 cards (%zd given)", nargs);
        return NULL;
    }
    hand_t h = 0;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        long c = PyLong_AsLong(args[i]);
        if ((unsigned long)c > 51) {
            if (c == -1 && PyErr_Occurred()) return NULL;
            PyErr_Format(PyExc_ValueError, "%ld is not a card (0..51)", c);
            return NULL;
        }
        h |= card_bit((int)c);
    }
    if (hand_size(h) != nargs) {
        PyErr_SetString(PyExc_ValueError, "evaluate() got the same card twice");
        return NULL;
    }
    return PyLong_FromUnsignedLong(eval_mask(h));
}

static PyObject *ARRAY_TYPE = NULL; /* array.array, imported at module init */

PyDoc_STRVAR(evaluate_many_doc,
             "evaluate_many(cards, k) -> array.array('I')\n\n"
             "Values of N hands of k (5..7) cards each, given as a bytes-like object\n"
             "of N * k card codes (uint8), hand after hand.");

static PyObject *py_evaluate_many(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "evaluate_many() takes (cards, k)");
        return NULL;
    }
    long k = PyLong_AsLong(args[1]);
    if (k == -1 && PyErr_Occurred()) return NULL;
    if (k < 5 || k > 7) {
        PyErr_SetString(PyExc_ValueError, "k must be 5, 6 or 7");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    if (view.len % k) {
        PyBuffer_Release(&view);
        PyErr_Format(PyExc_ValueError, "buffer length %zd is not a multiple of k=%ld", view.len,
                     k);
        return NULL;
    }
    Py_ssize_t n = view.len / k;
    PyObject *bytes = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(uint32_t));
    if (!bytes) {
        PyBuffer_Release(&view);
        return NULL;
    }
    uint32_t *out = (uint32_t *)PyBytes_AS_STRING(bytes);
    const uint8_t *p = (const uint8_t *)view.buf;
    Py_ssize_t bad = -1;
    for (Py_ssize_t i = 0; i < n; i++, p += k) {
        hand_t h = 0;
        int ok = 1;
        for (long j = 0; j < k; j++) {
            if (p[j] > 51) ok = 0;
            h |= card_bit(p[j] & 63);
        }
        if (!ok || hand_size(h) != k) {
            bad = i;
            break;
        }
        out[i] = eval_mask(h);
    }
    PyBuffer_Release(&view);
    if (bad >= 0) {
        Py_DECREF(bytes);
        PyErr_Format(PyExc_ValueError,
                     "hand %zd has a card outside 0..51 or the same card twice", bad);
        return NULL;
    }
    PyObject *result = PyObject_CallFunction(ARRAY_TYPE, "sO", "I", bytes);
    Py_DECREF(bytes);
    return result;
}

/* ------------------------------------------------------------------------ */
/* Weighted ranges (Walker/Vose alias tables).                               */

typedef struct {
    Py_ssize_t n;
    hand_t *mask;       /* the combos, as 2-card masks */
    uint64_t *thresh;   /* accept combo i if a 32-bit draw < thresh[i] */
    uint32_t *alias;    /* otherwise take alias[i] */
} range_t;

static void range_free(range_t *r) {
    PyMem_Free(r->mask);
    PyMem_Free(r->thresh);
    PyMem_Free(r->alias);
    memset(r, 0, sizeof(*r));
}

/* Parses (combos: bytes-like of 2*m codes, weights: sequence of m numbers),
 * dropping combos that touch `blocked` or weigh 0, and builds the alias table. */
static int range_build(range_t *r, PyObject *spec, hand_t blocked, Py_ssize_t index) {
    memset(r, 0, sizeof(*r));
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 2) {
        PyErr_Format(PyExc_TypeError, "range %zd must be None or a (combos, weights) tuple",
                     index);
        return -1;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(PyTuple_GET_ITEM(spec, 0), &view, PyBUF_SIMPLE) < 0) return -1;
    PyObject *weights = PySequence_Fast(PyTuple_GET_ITEM(spec, 1), "weights must be a sequence");
    if (!weights) {
        PyBuffer_Release(&view);
        return -1;
    }
    Py_ssize_t m = view.len / 2;
    double *w = NULL;
    int rc = -1;
    if (view.len % 2 || PySequence_Fast_GET_SIZE(weights) != m) {
        PyErr_Format(PyExc_ValueError, "range %zd: need 2 card codes per combo and one weight "
                     "per combo", index);
        goto done;
    }
    r->mask = PyMem_Malloc(sizeof(hand_t) * (size_t)(m ? m : 1));
    w = PyMem_Malloc(sizeof(double) * (size_t)(m ? m : 1));
    if (!r->mask || !w) {
        PyErr_NoMemory();
        goto done;
    }
    const uint8_t *p = (const uint8_t *)view.buf;
    double total = 0.0;
    Py_ssize_t n = 0;
    for (Py_ssize_t i = 0; i < m; i++) {
        int a = p[2 * i], b = p[2 * i + 1];
        if (a > 51 || b > 51 || a == b) {
            PyErr_Format(PyExc_ValueError, "range %zd: combo %zd is not two distinct cards",
                         index, i);
            goto done;
        }
        double wi = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(weights, i));
        if (wi == -1.0 && PyErr_Occurred()) goto done;
        if (!(wi >= 0.0) || wi > 1e300) {
            PyErr_Format(PyExc_ValueError, "range %zd: weights must be finite and >= 0", index);
            goto done;
        }
        hand_t hm = card_bit(a) | card_bit(b);
        if (wi == 0.0 || (hm & blocked)) continue;
        r->mask[n] = hm;
        w[n] = wi;
        total += wi;
        n++;
    }
    if (n == 0) {
        PyErr_Format(PyExc_ValueError,
                     "range %zd has no combo left once the known cards are removed", index);
        goto done;
    }
    r->n = n;
    r->thresh = PyMem_Malloc(sizeof(uint64_t) * (size_t)n);
    r->alias = PyMem_Malloc(sizeof(uint32_t) * (size_t)n);
    uint32_t *small = PyMem_Malloc(sizeof(uint32_t) * (size_t)n);
    uint32_t *large = PyMem_Malloc(sizeof(uint32_t) * (size_t)n);
    if (!r->thresh || !r->alias || !small || !large) {
        PyMem_Free(small);
        PyMem_Free(large);
        PyErr_NoMemory();
        goto done;
    }
    /* Vose's alias method: scaled weights average 1. */
    Py_ssize_t ns = 0, nl = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        w[i] = w[i] * (double)n / total;
        if (w[i] < 1.0) small[ns++] = (uint32_t)i;
        else large[nl++] = (uint32_t)i;
    }
    while (ns && nl) {
        uint32_t sm = small[--ns], lg = large[--nl];
        r->thresh[sm] = (uint64_t)(w[sm] * 4294967296.0);
        r->alias[sm] = lg;
        w[lg] = (w[lg] + w[sm]) - 1.0;
        if (w[lg] < 1.0) small[ns++] = lg;
        else large[nl++] = lg;
    }
    while (nl) {
        uint32_t i = large[--nl];
        r->thresh[i] = (uint64_t)1 << 32;
        r->alias[i] = i;
    }
    while (ns) { /* rounding leftovers: probability 1 */
        uint32_t i = small[--ns];
        r->thresh[i] = (uint64_t)1 << 32;
        r->alias[i] = i;
    }
    PyMem_Free(small);
    PyMem_Free(large);
    rc = 0;
done:
    PyMem_Free(w);
    Py_DECREF(weights);
    PyBuffer_Release(&view);
    if (rc < 0) range_free(r);
    return rc;
}

static inline hand_t range_sample(const range_t *r, rng_t *g) {
    uint32_t i = rng_below(g, (uint32_t)r->n);
    uint64_t u = rng_next(g) >> 32;
    return r->mask[u < r->thresh[i] ? i : r->alias[i]];
}

/* Consecutive failed joint deals before giving up on incompatible ranges. */
#define MAX_JOINT_REJECTIONS 1000000

/* ------------------------------------------------------------------------ */
/* Hold'em equity                                                            */

PyDoc_STRVAR(holdem_equity_doc,
             "holdem_equity(hero, board, dead, ranges, samples, seed) -> (win, tie, equity)\n\n"
             "Monte Carlo equity of hero's two hole cards against len(ranges)\n"
             "opponents. hero (2), board (0..5) and dead are bytes-like card codes.\n"
             "Each range is None (any two cards) or (combos, weights): combos a\n"
             "bytes-like of 2 codes per combo, weights one number per combo.\n"
             "Combos touching known cards are dropped; joint deals in which two\n"
             "ranged opponents collide are redrawn whole, so the opponents'\n"
             "hands follow the weighted ranges conditioned on being disjoint.\n"
             "Returns fractions of samples: win, tie share (a k-way tie counts\n"
             "1/k) and equity = win + tie. Deterministic for a given seed.");

static PyObject *py_holdem_equity(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError,
                        "holdem_equity() takes (hero, board, dead, ranges, samples, seed)");
        return NULL;
    }
    hand_t hero, board, dead;
    uint8_t tmp[52];
    Py_ssize_t nh = read_cards(args[0], "hero", tmp, 52, &hero);
    if (nh < 0) return NULL;
    if (nh != 2) {
        PyErr_Format(PyExc_ValueError, "hero needs exactly 2 hole cards, got %zd", nh);
        return NULL;
    }
    Py_ssize_t nb = read_cards(args[1], "board", tmp, 5, &board);
    if (nb < 0) return NULL;
    Py_ssize_t nd = read_cards(args[2], "dead", tmp, 52, &dead);
    if (nd < 0) return NULL;
    if (overlap_error(hero, board, "hero", "board") || overlap_error(hero, dead, "hero", "dead") ||
        overlap_error(board, dead, "board", "dead"))
        return NULL;
    Py_ssize_t samples;
    uint64_t seed;
    if (read_samples_seed(args[4], args[5], &samples, &seed) < 0) return NULL;

    PyObject *ranges = PySequence_Fast(args[3], "ranges must be a sequence");
    if (!ranges) return NULL;
    Py_ssize_t nopp = PySequence_Fast_GET_SIZE(ranges);
    hand_t known = hero | board | dead;
    int nknown = (int)(nh + nb + nd);
    if (nopp < 1 || nknown + 2 * nopp + (5 - nb) > 52) {
        Py_DECREF(ranges);
        PyErr_Format(PyExc_ValueError,
                     "need at least one opponent and enough cards: %zd opponents with %d "
                     "known cards do not fit in the deck",
                     nopp, nknown);
        return NULL;
    }
    range_t *rs = PyMem_Calloc((size_t)nopp, sizeof(range_t));
    if (!rs) {
        Py_DECREF(ranges);
        return PyErr_NoMemory();
    }
    Py_ssize_t nranged = 0;
    PyObject *result = NULL;
    for (Py_ssize_t i = 0; i < nopp; i++) {
        PyObject *spec = PySequence_Fast_GET_ITEM(ranges, i);
        if (spec == Py_None) continue;
        if (range_build(&rs[nranged], spec, known, i) < 0) goto done;
        nranged++;
    }

    hand_t pool[52];
    uint32_t npool = 0;
    for (int c = 0; c < 52; c++)
        if (!(known & card_bit(c))) pool[npool++] = card_bit(c);

    double wins = 0.0, ties = 0.0;
    int failed = 0;
    int board_missing = (int)(5 - nb);
    Py_BEGIN_ALLOW_THREADS
    rng_t g;
    rng_seed(&g, seed);
    hand_t opp[32];
    for (Py_ssize_t s = 0; s < samples; s++) {
        hand_t used;
        long rejections = 0;
        for (;;) {
            used = known;
            Py_ssize_t i = 0;
            for (; i < nranged; i++) {
                hand_t m = range_sample(&rs[i], &g);
                if (m & used) break;
                used |= m;
                opp[i] = m;
            }
            if (i == nranged) break;
            if (++rejections > MAX_JOINT_REJECTIONS) {
                failed = 1;
                break;
            }
        }
        if (failed) break;
        for (Py_ssize_t i = nranged; i < nopp; i++) {
            hand_t a = draw_card(&g, pool, npool, used);
            used |= a;
            hand_t b = draw_card(&g, pool, npool, used);
            used |= b;
            opp[i] = a | b;
        }
        hand_t full = board;
        for (int j = 0; j < board_missing; j++) {
            hand_t b = draw_card(&g, pool, npool, used);
            used |= b;
            full |= b;
        }
        uint32_t hv = eval_mask(hero | full);
        uint32_t best = 0;
        int nbest = 0;
        for (Py_ssize_t i = 0; i < nopp; i++) {
            uint32_t v = eval_mask(opp[i] | full);
            if (v > best) {
                best = v;
                nbest = 1;
            } else if (v == best) {
                nbest++;
            }
        }
        if (hv > best) wins += 1.0;
        else if (hv == best) ties += 1.0 / (double)(nbest + 1);
    }
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_SetString(PyExc_ValueError,
                        "the opponents' ranges could not be dealt without sharing cards");
        goto done;
    }
    double n = (double)samples;
    result = Py_BuildValue("(ddd)", wins / n, ties / n, (wins + ties) / n);
done:
    for (Py_ssize_t i = 0; i < nopp; i++) range_free(&rs[i]);
    PyMem_Free(rs);
    Py_DECREF(ranges);
    return result;
}

/* ------------------------------------------------------------------------ */
/* Five-card draw equity                                                     */

/* Kept-set tables for the draw opponent model: for k = 1..5 kept cards, every
 * k-card set of the full deck whose category is at least KEPT_FLOOR[k],
 * ordered by category from the best down, so the sets reaching category c
 * are a prefix of length at_least[c].  Built once, on first use, while the
 * GIL is held; the largest (k = 4, 87k sets; k = 5, 198k sets) take a few
 * tens of milliseconds.  Five kept cards needing only a pair use rejection
 * sampling instead (half of all hands qualify), which keeps the tables small. */
static const int KEPT_FLOOR[6] = {0, ONE_PAIR, ONE_PAIR, ONE_PAIR, ONE_PAIR, TWO_PAIR};

typedef struct {
    hand_t *sets;
    Py_ssize_t at_least[N_CATEGORIES + 1];
} kept_table_t;

static kept_table_t KEPT_TABLES[6];

typedef struct {
    int floor;
    Py_ssize_t n, cap;
    hand_t *sets;
    uint8_t *cats;
    int failed;
} kept_scan_t;

/* Visits every `left`-card extension of prefix with cards numbered >= start. */
static void scan_kept(kept_scan_t *scan, int start, int left, hand_t prefix) {
    if (left == 0) {
        int cat = (int)(eval_mask(prefix) >> CATEGORY_SHIFT);
        if (cat < scan->floor || scan->failed) return;
        if (scan->n == scan->cap) {
            Py_ssize_t cap = scan->cap ? 2 * scan->cap : 4096;
            hand_t *sets = PyMem_Realloc(scan->sets, sizeof(hand_t) * (size_t)cap);
            if (sets) scan->sets = sets;
            uint8_t *cats = PyMem_Realloc(scan->cats, (size_t)cap);
            if (cats) scan->cats = cats;
            if (!sets || !cats) {
                scan->failed = 1;
                return;
            }
            scan->cap = cap;
        }
        scan->sets[scan->n] = prefix;
        scan->cats[scan->n++] = (uint8_t)cat;
        return;
    }
    for (int c = start; c <= 52 - left; c++) scan_kept(scan, c + 1, left - 1, prefix | card_bit(c));
}

static const kept_table_t *kept_table(int k) {
    kept_table_t *t = &KEPT_TABLES[k];
    if (t->sets) return t;
    kept_scan_t scan = {KEPT_FLOOR[k], 0, 0, NULL, NULL, 0};
    scan_kept(&scan, 0, k, 0);
    hand_t *sets = scan.failed ? NULL : PyMem_Malloc(sizeof(hand_t) * (size_t)(scan.n + 1));
    if (!sets) {
        PyMem_Free(scan.sets);
        PyMem_Free(scan.cats);
        PyErr_NoMemory();
        return NULL;
    }
    /* Counting sort by category, best first. */
    Py_ssize_t count[N_CATEGORIES] = {0}, fill[N_CATEGORIES], total = 0;
    for (Py_ssize_t i = 0; i < scan.n; i++) count[scan.cats[i]]++;
    for (int cat = N_CATEGORIES - 1; cat >= 0; cat--) {
        fill[cat] = total;
        total += count[cat];
        t->at_least[cat] = total;
    }
    t->at_least[N_CATEGORIES] = 0;
    for (Py_ssize_t i = 0; i < scan.n; i++) sets[fill[scan.cats[i]]++] = scan.sets[i];
    PyMem_Free(scan.sets);
    PyMem_Free(scan.cats);
    t->sets = sets;
    return t;
}

typedef struct {
    int kept;          /* cards the opponent kept (5 - draws) */
    int min_category;  /* 0: unconstrained */
    hand_t *list;      /* admissible kept sets avoiding the known cards, or NULL */
    Py_ssize_t nlist;
    int owns_list;
} draw_opp_t;

/* The admissible kept sets of o that avoid the known cards. */
static int admissible_kept(draw_opp_t *o, hand_t known) {
    const kept_table_t *t = kept_table(o->kept);
    if (!t) return -1;
    Py_ssize_t n = t->at_least[o->min_category];
    hand_t *list = PyMem_Malloc(sizeof(hand_t) * (size_t)(n ? n : 1));
    if (!list) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t m = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!(t->sets[i] & known)) list[m++] = t->sets[i];
    o->list = list;
    o->nlist = m;
    o->owns_list = 1;
    return 0;
}

PyDoc_STRVAR(draw_equity_doc,
             "draw_equity(hero, keep, dead, opponents, samples, seed) -> (win, tie, equity)\n\n"
             "Monte Carlo showdown equity in five-card draw. hero: hero's 5 cards;\n"
             "keep: the subset hero keeps (hero draws 5 - len(keep) from the unseen\n"
             "cards; the discards are out of play); dead: other known cards out of\n"
             "play. opponents: sequence of (draws, min_category): the opponent kept\n"
             "5 - draws unknown cards whose value (pairs/trips/quads only for fewer\n"
             "than 5 cards) is at least min_category (0 = anything), then drew\n"
             "`draws` fresh cards. Kept sets are uniform over the admissible ones;\n"
             "the opponents' own discards are not modelled. Deterministic per seed.");

static PyObject *py_draw_equity(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError,
                        "draw_equity() takes (hero, keep, dead, opponents, samples, seed)");
        return NULL;
    }
    hand_t hero, keep, dead;
    uint8_t tmp[52];
    Py_ssize_t nh = read_cards(args[0], "hero", tmp, 52, &hero);
    if (nh < 0) return NULL;
    if (nh != 5) {
        PyErr_Format(PyExc_ValueError, "hero needs exactly 5 cards, got %zd", nh);
        return NULL;
    }
    Py_ssize_t nk = read_cards(args[1], "keep", tmp, 5, &keep);
    if (nk < 0) return NULL;
    if (keep & ~hero) {
        PyErr_SetString(PyExc_ValueError, "keep must be a subset of hero's cards");
        return NULL;
    }
    Py_ssize_t nd = read_cards(args[2], "dead", tmp, 52, &dead);
    if (nd < 0) return NULL;
    if (overlap_error(hero, dead, "hero", "dead")) return NULL;
    Py_ssize_t samples;
    uint64_t seed;
    if (read_samples_seed(args[4], args[5], &samples, &seed) < 0) return NULL;

    PyObject *opps = PySequence_Fast(args[3], "opponents must be a sequence");
    if (!opps) return NULL;
    Py_ssize_t nopp = PySequence_Fast_GET_SIZE(opps);
    hand_t known = hero | dead;
    int nknown = (int)(nh + nd);
    if (nopp < 1 || nopp > 32 || nknown + (5 - nk) + 5 * nopp > 52) {
        Py_DECREF(opps);
        PyErr_Format(PyExc_ValueError,
                     "need at least one opponent and enough cards: %zd opponents with %d "
                     "known cards and hero drawing %zd do not fit in the deck",
                     nopp, nknown, 5 - nk);
        return NULL;
    }
    draw_opp_t os[32];
    memset(os, 0, sizeof(os));
    PyObject *result = NULL;
    hand_t pool[52];
    int npool = 0;
    for (int c = 0; c < 52; c++)
        if (!(known & card_bit(c))) pool[npool++] = card_bit(c);

    for (Py_ssize_t i = 0; i < nopp; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(opps, i);
        long draws, cat;
        if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "ll", &draws, &cat)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "opponent %zd must be a (draws, min_category) tuple "
                         "of ints", i);
            goto done;
        }
        if (draws < 0 || draws > 5) {
            PyErr_Format(PyExc_ValueError, "opponent %zd draws %ld cards; must be 0..5", i, draws);
            goto done;
        }
        if (cat < 0 || cat >= N_CATEGORIES) {
            PyErr_Format(PyExc_ValueError, "opponent %zd: min_category must be 0..8", i);
            goto done;
        }
        os[i].kept = (int)(5 - draws);
        os[i].min_category = (int)cat;
        if (cat > 0 && os[i].kept == 0) {
            PyErr_Format(PyExc_ValueError, "opponent %zd draws 5 and keeps nothing, so a "
                         "minimum category makes no sense", i);
            goto done;
        }
    }
    /* Admissible kept sets, shared between opponents with the same constraint. */
    for (Py_ssize_t i = 0; i < nopp; i++) {
        draw_opp_t *o = &os[i];
        if (o->min_category == 0 || o->min_category < KEPT_FLOOR[o->kept]) continue;
        for (Py_ssize_t j = 0; j < i; j++) {
            if (os[j].list && os[j].kept == o->kept && os[j].min_category == o->min_category) {
                o->list = os[j].list;
                o->nlist = os[j].nlist;
                break;
            }
        }
        if (o->list) continue;
        if (admissible_kept(o, known) < 0) goto done;
        if (o->nlist == 0) {
            PyErr_Format(PyExc_ValueError,
                         "opponent %zd: no %d kept cards can reach category %d", i, o->kept,
                         o->min_category);
            goto done;
        }
    }

    double wins = 0.0, ties = 0.0;
    int failed = 0;
    int hero_draws = (int)(5 - nk);
    Py_BEGIN_ALLOW_THREADS
    rng_t g;
    rng_seed(&g, seed);
    hand_t opp[32];
    for (Py_ssize_t s = 0; s < samples && !failed; s++) {
        hand_t used;
        long rejections = 0;
        /* Constrained kept sets first, redrawing the joint deal on collision. */
        for (;;) {
            used = known;
            Py_ssize_t i = 0;
            for (; i < nopp; i++) {
                draw_opp_t *o = &os[i];
                if (o->min_category == 0) continue;
                hand_t m;
                if (o->list) {
                    m = o->list[rng_below(&g, (uint32_t)o->nlist)];
                    if (m & used) break;
                } else {
                    /* Pat with at least a pair: rejection sampling of five
                     * unseen cards (about half of all hands qualify). */
                    uint32_t min_value = (uint32_t)o->min_category << CATEGORY_SHIFT;
                    long tries = 0;
                    for (;;) {
                        m = 0;
                        for (int j = 0; j < 5; j++)
                            m |= draw_card(&g, pool, (uint32_t)npool, used | m);
                        if (eval_mask(m) >= min_value) break;
                        if (++tries > MAX_JOINT_REJECTIONS) break;
                    }
                    if (eval_mask(m) < min_value) {
                        failed = 1;
                        break;
                    }
                }
                used |= m;
                opp[i] = m;
            }
            if (failed || i == nopp) break;
            if (++rejections > MAX_JOINT_REJECTIONS) {
                failed = 1;
                break;
            }
        }
        if (failed) break;
        hand_t hv_hand = keep;
        for (int j = 0; j < hero_draws; j++) {
            hand_t b = draw_card(&g, pool, (uint32_t)npool, used);
            used |= b;
            hv_hand |= b;
        }
        uint32_t hv = eval_mask(hv_hand);
        uint32_t best = 0;
        int nbest = 0;
        for (Py_ssize_t i = 0; i < nopp; i++) {
            hand_t h = os[i].min_category ? opp[i] : 0;
            for (int j = os[i].min_category ? os[i].kept : 0; j < 5; j++) {
                hand_t b = draw_card(&g, pool, (uint32_t)npool, used);
                used |= b;
                h |= b;
            }
            uint32_t v = eval_mask(h);
            if (v > best) {
                best = v;
                nbest = 1;
            } else if (v == best) {
                nbest++;
            }
        }
        if (hv > best) wins += 1.0;
        else if (hv == best) ties += 1.0 / (double)(nbest + 1);
    }
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_SetString(PyExc_ValueError,
                        "the opponents' kept-card constraints could not be met together");
        goto done;
    }
    double n = (double)samples;
    result = Py_BuildValue("(ddd)", wins / n, ties / n, (wins + ties) / n);
done:
    for (Py_ssize_t i = 0; i < nopp; i++)
        if (os[i].owns_list) PyMem_Free(os[i].list);
    Py_DECREF(opps);
    return result;
}

/* ------------------------------------------------------------------------ */

static PyMethodDef native_methods[] = {
    {"evaluate", (PyCFunction)(void (*)(void))py_evaluate, METH_FASTCALL, evaluate_doc},
    {"evaluate_many", (PyCFunction)(void (*)(void))py_evaluate_many, METH_FASTCALL,
     evaluate_many_doc},
    {"holdem_equity", (PyCFunction)(void (*)(void))py_holdem_equity, METH_FASTCALL,
     holdem_equity_doc},
    {"draw_equity", (PyCFunction)(void (*)(void))py_draw_equity, METH_FASTCALL,
     draw_equity_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT,
    "felt._native",
    "Native poker hand evaluator and Monte Carlo equity (see felt.evaluator, felt.equity).",
    -1,
    native_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__native(void) {
    init_tables();
    if (!ARRAY_TYPE) {
        PyObject *array_module = PyImport_ImportModule("array");
        if (!array_module) return NULL;
        ARRAY_TYPE = PyObject_GetAttrString(array_module, "array");
        Py_DECREF(array_module);
        if (!ARRAY_TYPE) return NULL;
    }
    PyObject *m = PyModule_Create(&native_module);
    if (!m) return NULL;
    if (PyModule_AddIntConstant(m, "CATEGORY_SHIFT", CATEGORY_SHIFT) < 0 ||
        PyModule_AddIntConstant(m, "MAJOR_SHIFT", MAJOR_SHIFT) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
