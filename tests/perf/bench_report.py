"""The report of tests/perf/bench.py: per-cell summaries, the text table, the Ferrite/peer
ratios and the SVG chart."""
import math
import statistics

BASELINE = "ferrite-native"  # the engine the table's ratio column divides by


def summarize(cell):
    runs = cell["runs"]
    samples = [s for r in runs for s in r["samples_ms"]]
    if not samples:
        return
    round_medians = [statistics.median(r["samples_ms"]) for r in runs]
    median = statistics.median(samples)
    cell.update(
        median_ms=median,
        min_ms=min(samples),
        round_medians_ms=round_medians,
        spread_pct=100.0 * (max(round_medians) - min(round_medians)) / median if median else 0,
        ready_ms=statistics.median(r["ready_ms"] for r in runs),
        rss_mib=statistics.median(r["rss_kib"] for r in runs) / 1024.0,
        samples=len(samples),
    )
    par = [r["detail"]["cpu_per_wall"] for r in runs
           if isinstance(r.get("detail"), dict) and "cpu_per_wall" in r["detail"]]
    if par:
        cell["cpu_per_wall"] = statistics.median(par)


def fmt_ms(v):
    if v is None:
        return "-"
    return f"{v:.4f}" if v < 0.1 else f"{v:.3f}" if v < 10 else f"{v:.1f}"


def table(results, models, engines):
    header = ["model", "engine", "median_ms", "ratio", "spread%", "n", "cpu/wall", "ready_ms",
              "rss_MiB", "check"]
    rows = []
    for m in models:
        base = results[m.name].get(BASELINE, {}).get("median_ms")
        for e in engines:
            cell = results[m.name][e]
            if "median_ms" not in cell:
                rows.append([m.name, e, "error: " + cell.get("error", "no result")])
                continue
            ratio = f"{cell['median_ms'] / base:.2f}" if base else "n/a"
            check = cell.get("check") or {}
            check_text = check.get("status", "-")
            if check.get("rel_err") is not None:
                check_text += f" {check['rel_err']:.1e}"
            par = f"{cell['cpu_per_wall']:.2f}" if "cpu_per_wall" in cell else "-"
            rows.append([m.name, e, fmt_ms(cell["median_ms"]), ratio, f"{cell['spread_pct']:.0f}",
                         str(cell["samples"]), par, fmt_ms(cell["ready_ms"]),
                         f"{cell['rss_mib']:.0f}", check_text])
    widths = [max([len(header[i])] + [len(r[i]) for r in rows if len(r) > 3 or i < 2])
              for i in range(len(header))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    for r in rows:
        if len(r) == 3:  # an error spans the rest of the line
            lines.append("  ".join([r[0].ljust(widths[0]), r[1].ljust(widths[1]), r[2]]))
        else:
            lines.append("  ".join(
                c.ljust(w) if i in (0, 1, 9) else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths))).rstrip())
    return "\n".join(lines)


# Ferrite engine -> the peer it is measured against (issue 6's criteria): same thread count.
PEERS = {"ferrite-native": "ort-node-t1", "ferrite-native-t2": "ort-node-t2",
         "ferrite-native-fast": "ort-node-t1",
         "ferrite-wasm": "ort-web-t1", "ferrite-base": "ort-node-t1",
         "ferrite-base-t2": "ort-node-t2"}


def peer_ratios(results, models, engines):
    """Per Ferrite engine with its peer in the run: the models where both have a median,
    their median ratios (Ferrite / peer) and the geometric mean of those ratios."""
    out = {}
    for e, peer in PEERS.items():
        if e not in engines or peer not in engines:
            continue
        ratios = {}
        for m in models:
            a = results[m.name][e].get("median_ms")
            b = results[m.name][peer].get("median_ms")
            if a and b:
                ratios[m.name] = a / b
        if ratios:
            geo = math.exp(sum(math.log(r) for r in ratios.values()) / len(ratios))
            out[e] = {"peer": peer, "ratios": ratios, "geomean": geo}
    return out


def peer_lines(peers):
    lines = []
    for e, p in peers.items():
        each = ", ".join(f"{m} {r:.2f}" for m, r in p["ratios"].items())
        lines.append(f"{e} / {p['peer']}: geomean {p['geomean']:.3f} ({each})")
    return lines


def xml(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def svg_chart(results, models, engines, title):
    """Per model a panel of horizontal bars (median latency, linear scale per panel) with a
    whisker from the fastest to the slowest round median (cut at the panel's edge, marked
    with an arrow head, when it runs past 1.5x the slowest median); errors are written out."""
    bar_h, gap, label_w, plot_w, value_w = 16, 4, 130, 420, 170
    width = label_w + plot_w + value_w + 20
    colors = {"ferrite": "#d9480f", "ort-node": "#1c7ed6", "ort-web": "#74c0fc",
              "torch": "#2f9e44"}
    parts, y = [], 40
    parts.append(f'<text x="10" y="22" font-size="15" font-weight="bold">{xml(title)}</text>')
    for m in models:
        cells = [(e, results[m.name][e]) for e in engines]
        medians = [c["median_ms"] for _, c in cells if "median_ms" in c]
        slowest = max([max(c["round_medians_ms"]) for _, c in cells if "median_ms" in c]
                      or [1.0])
        top = min(slowest, 1.5 * max(medians)) if medians else 1.0
        parts.append(f'<text x="10" y="{y + 14}" font-size="13" font-weight="bold">'
                     f'{xml(m.name)}  (median ms per run; ratio = engine / {BASELINE})</text>')
        y += 22
        base = results[m.name].get(BASELINE, {}).get("median_ms")
        for e, c in cells:
            parts.append(f'<text x="{label_w - 6}" y="{y + bar_h - 4}" font-size="11" '
                         f'text-anchor="end">{xml(e)}</text>')
            if "median_ms" not in c:
                msg = c.get("error", "no result")
                msg = msg if len(msg) < 90 else msg[:87] + "..."
                parts.append(f'<text x="{label_w + 4}" y="{y + bar_h - 4}" font-size="11" '
                             f'fill="#c92a2a">error: {xml(msg)}</text>')
            else:
                color = next((v for k, v in colors.items() if e.startswith(k)), "#868e96")
                w = max(1.0, plot_w * c["median_ms"] / top)
                lo = label_w + plot_w * min(c["round_medians_ms"]) / top
                hi = label_w + plot_w * min(max(c["round_medians_ms"]) / top, 1.0)
                mid = y + bar_h / 2
                ratio = f", {c['median_ms'] / base:.2f}x" if base else ""
                parts.append(f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h}" '
                             f'fill="{color}"/>')
                parts.append(f'<line x1="{lo:.1f}" y1="{mid}" x2="{hi:.1f}" y2="{mid}" '
                             f'stroke="#212529" stroke-width="1.5"/>')
                if max(c["round_medians_ms"]) > top:  # cut: an arrow head at the edge
                    parts.append(f'<path d="M{hi - 6:.1f},{mid - 4} L{hi:.1f},{mid} '
                                 f'L{hi - 6:.1f},{mid + 4}" fill="none" stroke="#212529"/>')
                parts.append(f'<text x="{label_w + plot_w + 6}" y="{y + bar_h - 4}" '
                             f'font-size="11">{fmt_ms(c["median_ms"])} ms{ratio}</text>')
            y += bar_h + gap
        y += 12
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y + 10}" '
            f'font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n'
            + "\n".join(parts) + "\n</svg>\n")


# ---- the machine --------------------------------------------------------------------------
