"""ONNX ops in forms the node suites do not test, for contrib_check.py: RoiAlign with the
adaptive sampling grid, half_pixel and regions past the image; TfIdfVectorizer's IDF and
TFIDF modes with weights; the bitwise ops on signed types; Cast into the small types from
integers and out of range. Each against a numpy formula (RoiAlign's as onnxruntime's kernel
and the ONNX reference compute it, max mode included)."""
import math

import numpy as np

from op_check import case

rng = np.random.default_rng(41)


def roi_align(x, rois, batch, oh, ow, ratio, scale, half_pixel, is_max):
    """Per output point: gh x gw bilinear samples in its bin (ratio, or ceil(size / out));
    a sample more than a pixel outside weighs 0; avg divides the sum by gh * gw, max takes
    the largest weighted tap (float32 arithmetic, as onnxruntime's)."""
    f = np.float32
    n_rois, c = rois.shape[0], x.shape[1]
    h, w = x.shape[2], x.shape[3]
    y = np.zeros((n_rois, c, oh, ow), np.float32)
    off = f(0.5) if half_pixel else f(0)
    for r in range(n_rois):
        sw, sh = f(rois[r, 0]) * f(scale) - off, f(rois[r, 1]) * f(scale) - off
        rw = f(rois[r, 2]) * f(scale) - off - sw
        rh = f(rois[r, 3]) * f(scale) - off - sh
        if not half_pixel:
            rw, rh = max(rw, f(1)), max(rh, f(1))
        bh, bw = rh / f(oh), rw / f(ow)
        gh = ratio if ratio > 0 else int(math.ceil(bh))
        gw = ratio if ratio > 0 else int(math.ceil(bw))
        for ph in range(oh):
            for pw in range(ow):
                acc = np.zeros(c, np.float32)
                best = None
                for iy in range(gh):
                    yy = sh + f(ph) * bh + (f(iy) + f(0.5)) * bh / f(gh)
                    for ix in range(gw):
                        xx = sw + f(pw) * bw + (f(ix) + f(0.5)) * bw / f(gw)
                        taps = np.zeros((4, c), np.float32)
                        if not (yy < -1 or yy > h or xx < -1 or xx > w):
                            py, px = max(yy, f(0)), max(xx, f(0))
                            yl, xl = int(py), int(px)
                            if yl >= h - 1:
                                yl = yh = h - 1
                                py = f(yl)
                            else:
                                yh = yl + 1
                            if xl >= w - 1:
                                xl = xh = w - 1
                                px = f(xl)
                            else:
                                xh = xl + 1
                            ly, lx = py - f(yl), px - f(xl)
                            hy, hx = f(1) - ly, f(1) - lx
                            img = x[batch[r]]
                            taps = np.stack([hy * hx * img[:, yl, xl], hy * lx * img[:, yl, xh],
                                             ly * hx * img[:, yh, xl], ly * lx * img[:, yh, xh]])
                        if is_max:
                            m = taps.max(0)
                            best = m if best is None else np.maximum(best, m)
                        else:
                            acc += taps.sum(0)
                y[r, :, ph, pw] = best if is_max else acc / f(max(gh * gw, 1))
    return y


def roi_cases():
    x = rng.standard_normal((2, 3, 9, 11)).astype(np.float32)
    rois = np.array([[0.5, 1.0, 7.2, 6.4], [2.0, 0.0, 10.5, 8.7], [-3.0, -2.5, 4.0, 3.0],
                     [6.0, 5.0, 14.0, 12.0], [1.0, 1.0, 1.5, 1.2]], np.float32)
    batch = np.array([0, 1, 1, 0, 1], np.int64)
    out = []
    for ratio, half, is_max in [(0, True, False), (0, False, True), (0, False, False),
                                (3, True, True), (1, False, False)]:
        name = f"roialign_r{ratio}_{'half' if half else 'legacy'}_{'max' if is_max else 'avg'}"
        want = roi_align(x, rois, batch, 3, 4, ratio, 0.8, half, is_max)
        attrs = dict(output_height=3, output_width=4, sampling_ratio=ratio, spatial_scale=0.8,
                     mode="max" if is_max else "avg",
                     coordinate_transformation_mode="half_pixel" if half else "output_half_pixel")
        # The adaptive grid needs the rois' values when compiling: an initializer here.
        out.append(case(name, "RoiAlign", [("X", x), ("rois", rois), ("batch_indices", batch)],
                        ["Y"], [want], domain="", opset=22, consts=["rois"] if ratio == 0 else [],
                        **attrs))
    return out


def tfidf(x, pool, counts, indexes, weights, min_n, max_n, skip, mode):
    """Counts of each pool n-gram per row (a unigram once, others once per skip), then the
    mode's weighting."""
    cols = max(indexes) + 1
    grams = {}
    k = 0
    for g, start in enumerate(counts):
        n = g + 1
        end = counts[g + 1] if g + 1 < len(counts) else len(pool)
        for at in range(start, end, n):
            grams[tuple(pool[at:at + n])] = indexes[k]
            k += 1
    y = np.zeros((x.shape[0], cols), np.float32)
    for row in range(x.shape[0]):
        for n in range(min_n, max_n + 1):
            for s in range(skip + 1 if n > 1 else 1):
                for i in range(x.shape[1]):
                    pos = [i + t * (s + 1) for t in range(n)]
                    if pos[-1] >= x.shape[1]:
                        continue
                    j = grams.get(tuple(int(x[row, p]) for p in pos))
                    if j is not None:
                        y[row, j] += 1
    w = np.array(weights if weights else [1.0] * len(indexes), np.float32)
    wj = np.ones(cols, np.float32)
    wj[list(indexes)] = w
    if mode == "IDF":
        return np.where(y > 0, wj, 0).astype(np.float32)
    return y * wj if mode == "TFIDF" else y


def tfidf_cases():
    x = rng.integers(0, 5, (3, 9)).astype(np.int64)
    # Unigrams 1 3 4 0; bigrams (1 1) (2 3) (0 4) (2 4); trigrams (0 4 2) (4 1 3).
    pool = [1, 3, 4, 0, 1, 1, 2, 3, 0, 4, 2, 4, 0, 4, 2, 4, 1, 3]
    counts = [0, 4, 12]
    indexes = [0, 7, 2, 5, 1, 3, 4, 6, 8, 9]
    weights = [0.5, 1.5, 2.0, 0.25, 3.0, 1.0, 0.75, 2.5, 1.25, 4.0]
    out = []
    for mode, mn, mx, skip in [("TF", 1, 3, 2), ("IDF", 2, 3, 1), ("TFIDF", 1, 2, 3)]:
        want = tfidf(x, pool, counts, indexes, weights, mn, mx, skip, mode)
        out.append(case(f"tfidf_{mode.lower()}", "TfIdfVectorizer", [("X", x)], ["Y"], [want],
                        domain="", opset=9, mode=mode, min_gram_length=mn, max_gram_length=mx,
                        max_skip_count=skip, pool_int64s=pool, ngram_counts=counts,
                        ngram_indexes=indexes, weights=weights))
    return out


def bitwise_cases():
    a = rng.integers(-128, 128, (4, 5)).astype(np.int8)
    b = rng.integers(-128, 128, (5,)).astype(np.int8)
    i = rng.integers(-2**31, 2**31, (3, 4)).astype(np.int32)
    return [
        case("bitwise_and_int8", "BitwiseAnd", [("a", a), ("b", b)], ["y"], [a & b],
             domain="", opset=18),
        case("bitwise_xor_int8", "BitwiseXor", [("a", a), ("b", b)], ["y"], [a ^ b],
             domain="", opset=18),
        case("bitwise_not_int32", "BitwiseNot", [("a", i)], ["y"], [~i], domain="", opset=18),
        case("bitwise_or_int32", "BitwiseOr", [("a", i), ("b", i[::-1].copy())], ["y"],
             [i | i[::-1]], domain="", opset=18),
    ]


def onnx_cases():
    return roi_cases() + tfidf_cases() + bitwise_cases()
