#!/usr/bin/python3
"""Render PNG figures from one gpufact report.

usage: plot_report.py REPORT.json OUTDIR

Draws each experiment's plot specs (report["experiments"][key]["plots"]): axis `x` against the
metrics whose tag matches `y` (an fnmatch glob such as "*/flop_rate"), one line per combination
of the `series` axes, from the results whose artifact is the spec's and whose status is passed.
Any other axis that varies makes one panel per value combination (folded into the line labels
when there would be more than 6 panels). A point is the metric's value (the median), with error
bars from stats min/max, or ±stddev when only that is there. An experiment without plot specs
gets one figure per headline metric against its first numeric axis with more than one value.

Files are OUTDIR/<artifact>__<y>.png (non-alphanumerics replaced by _); one line is printed per
file written, or "no figures" when there is nothing to draw (empty or skipped-only report).
Exit status: 0 when every figure was drawn, 1 when a figure failed or the report cannot be
read, 2 on a usage error. Needs python3-matplotlib (Debian 12 ships 3.6); uses the Agg backend.
"""

import fnmatch
import itertools
import json
import math
import numbers
import os
import re
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import ticker  # noqa: E402

MAX_PANELS = 6
SIZE_SUFFIXES = ["", "K", "M", "G", "T", "P"]


# ---------------------------------------------------------------------------------------------
# small helpers


def is_number(v):
    # numbers.Real covers numpy scalars too (matplotlib hands those to tick formatters)
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)


def sanitize(text):
    return re.sub(r"[^A-Za-z0-9]", "_", text)


def sanitize_y(text):
    return re.sub(r"_+", "_", sanitize(text)).strip("_") or "y"


def binary_size(v):
    """4096 -> '4K', 3 << 30 -> '3G', 1536 -> '1.5K', 100 -> '100'."""
    if not is_number(v) or v <= 0:
        return f"{v:g}" if is_number(v) else str(v)
    i = 0
    while i + 1 < len(SIZE_SUFFIXES) and v >= 1024:
        v /= 1024.0
        i += 1
    text = f"{v:.0f}" if abs(v - round(v)) < 1e-9 else f"{v:.3g}"
    return text + SIZE_SUFFIXES[i]


def plain_number(v):
    if not is_number(v):
        return str(v)
    if abs(v - round(v)) < 1e-9 and abs(v) < 1e15:
        return f"{int(round(v)):,}" if abs(v) >= 100000 else f"{int(round(v))}"
    return f"{v:g}"


def common_word_suffix(names):
    """'sgemm rate', 'dgetrf rate' -> 'rate'."""
    split = [n.split() for n in names if n]
    if not split:
        return ""
    out = []
    for words in zip(*[list(reversed(s)) for s in split]):
        if all(w == words[0] for w in words):
            out.append(words[0])
        else:
            break
    return " ".join(reversed(out))


def axis_value_text(value, kind):
    if kind == "size" and is_number(value):
        return binary_size(value)
    if is_number(value):
        return plain_number(value)
    return str(value)


def sort_key(v):
    return (0, v, "") if is_number(v) else (1, 0, str(v))


# ---------------------------------------------------------------------------------------------
# the report


class Report:
    def __init__(self, doc):
        self.doc = doc if isinstance(doc, dict) else {}
        self.meta = self.doc.get("meta") or {}
        self.system = self.doc.get("system") or {}
        exps = self.doc.get("experiments")
        self.experiments = exps if isinstance(exps, dict) else {}
        results = self.doc.get("results")
        self.results = [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []

    def passed(self, artifact):
        return [r for r in self.results if r.get("artifact") == artifact and r.get("status") == "passed"]

    def axis_info(self, experiment, name):
        """(kind, help) of an axis from the experiment's declaration, or guesses."""
        for a in (self.experiments.get(experiment) or {}).get("axes") or []:
            if isinstance(a, dict) and a.get("name") == name:
                return a.get("kind") or "", a.get("help") or ""
        return ("size" if name == "bytes" else ""), ""

    def subtitle(self):
        parts = []
        version = self.meta.get("version")
        parts.append(f"gpufact {version}" if version else "gpufact")
        gpus = [g.get("name") for g in self.system.get("gpus") or [] if isinstance(g, dict) and g.get("name")]
        dev = self.meta.get("device")
        if gpus:
            parts.append(gpus[dev] if isinstance(dev, int) and 0 <= dev < len(gpus) else gpus[0])
        cpu = (self.system.get("host") or {}).get("cpu_model")
        if cpu:
            parts.append(cpu)
        if self.meta.get("preset"):
            parts.append(f"preset {self.meta['preset']}")
        started = self.meta.get("started_utc")
        if isinstance(started, str) and started:
            parts.append(started.replace("T", " ").replace("Z", " UTC"))
        if self.meta.get("complete") is False:
            parts.append("INCOMPLETE RUN")
        return "  ·  ".join(parts)


# ---------------------------------------------------------------------------------------------
# one figure


class Point:
    __slots__ = ("result", "metric", "x", "y", "lo", "hi", "published")

    def __init__(self, result, metric, x):
        self.result, self.metric, self.x = result, metric, x
        self.y = metric.get("value")
        stats = metric.get("stats") if isinstance(metric.get("stats"), dict) else {}
        self.lo = self.hi = None
        if is_number(stats.get("min")) and is_number(stats.get("max")):
            self.lo, self.hi = stats["min"], stats["max"]
        elif is_number(stats.get("stddev")) and is_number(self.y):
            self.lo, self.hi = self.y - stats["stddev"], self.y + stats["stddev"]
        pub = metric.get("published")
        self.published = pub.get("value") if isinstance(pub, dict) and is_number(pub.get("value")) else None


def error_bar_kind(points):
    kinds = set()
    for p in points:
        stats = p.metric.get("stats") if isinstance(p.metric.get("stats"), dict) else {}
        if is_number(stats.get("min")) and is_number(stats.get("max")):
            kinds.add("min–max")
        elif is_number(stats.get("stddev")):
            kinds.add("±stddev")
    samples = {len(p.metric.get("samples") or []) for p in points} - {0}
    text = "/".join(sorted(kinds))
    if not text:
        return ""
    if len(samples) == 1:
        text += f" of {samples.pop()} samples"
    return f"points: median, bars: {text}"


class FigureSpec:
    def __init__(self, experiment, artifact, x, y, series, logx, logy, title):
        self.experiment, self.artifact, self.x, self.y = experiment, artifact, x, y
        self.series = [s for s in series if isinstance(s, str) and s != x]
        self.logx, self.logy, self.title = bool(logx), bool(logy), title or ""


def collect_points(report, spec):
    points = []
    for r in report.passed(spec.artifact):
        axes = r.get("axes") if isinstance(r.get("axes"), dict) else {}
        if spec.x not in axes:
            continue
        for m in r.get("metrics") or []:
            if not isinstance(m, dict) or not isinstance(m.get("tag"), str):
                continue
            if fnmatch.fnmatchcase(m["tag"], spec.y) and is_number(m.get("value")):
                points.append(Point(r, m, axes[spec.x]))
    return points


def varying_axes(points, exclude):
    names = []
    for p in points:
        for k in p.result.get("axes") or {}:
            if k not in names and k not in exclude:
                names.append(k)
    out = []
    for k in names:
        values = {json.dumps((p.result.get("axes") or {}).get(k)) for p in points}
        if len(values) > 1:
            out.append(k)
    return out


def fixed_axes(points, exclude, exp, report):
    """'threads=2' for each axis that has one value over all points."""
    out = []
    varying = set(varying_axes(points, exclude))
    for k, v in (points[0].result.get("axes") or {}).items():
        if k not in exclude and k not in varying and all(k in (p.result.get("axes") or {}) for p in points):
            out.append(f"{k}={axis_value_text(v, report.axis_info(exp, k)[0])}")
    return out


def draw(report, spec, path):
    """Draws spec into path; returns False when there is nothing to draw."""
    points = collect_points(report, spec)
    if not points:
        return False
    exp = spec.experiment
    x_kind, x_help = report.axis_info(exp, spec.x)
    numeric_x = all(is_number(p.x) for p in points)
    size_x = numeric_x and (x_kind == "size" or spec.x == "bytes")

    varying = varying_axes(points, {spec.x})
    series_axes = [s for s in spec.series if s in varying]  # a series axis held at one value splits nothing
    others = [a for a in varying if a not in series_axes]
    panel_axes = others if others else []
    if panel_axes:
        combos = {tuple(json.dumps((p.result.get("axes") or {}).get(a)) for a in panel_axes) for p in points}
        if len(combos) > MAX_PANELS:
            series_axes = series_axes + panel_axes
            panel_axes = []

    def axes_of(p, names):
        a = p.result.get("axes") or {}
        return tuple(a.get(n) for n in names)

    # When one line would hold several tags (a glob without series splitting them), split by tag.
    lines_tags = {}
    for p in points:
        lines_tags.setdefault(axes_of(p, series_axes + panel_axes), set()).add(p.metric["tag"])
    split_by_tag = any(len(t) > 1 for t in lines_tags.values())

    def line_key(p):
        return axes_of(p, series_axes) + ((p.metric["tag"],) if split_by_tag else ())

    def line_label(key):
        parts = [axis_value_text(v, report.axis_info(exp, n)[0]) for n, v in zip(series_axes, key)]
        if split_by_tag:
            parts.append(key[-1])
        return ", ".join(parts) if parts else (points[0].metric.get("name") or spec.y)

    legend_title = ", ".join(series_axes + (["metric"] if split_by_tag else []))

    panels = {}
    for p in points:
        panels.setdefault(axes_of(p, panel_axes), []).append(p)
    panel_keys = sorted(panels, key=lambda k: [sort_key(v) for v in k])

    # categorical x positions for text axes
    x_values = sorted({p.x for p in points}, key=sort_key)
    x_pos = {v: i for i, v in enumerate(x_values)} if not numeric_x else None

    def xv(p):
        return p.x if numeric_x else x_pos[p.x]

    logx = spec.logx and numeric_x and all(p.x > 0 for p in points)
    logy = spec.logy and all(p.y > 0 for p in points)

    n = len(panel_keys)
    ncols = min(3, n)
    nrows = math.ceil(n / ncols)
    fig, axs = plt.subplots(nrows, ncols, figsize=(7.5 * ncols if n > 1 else 9, 5.2 * nrows), squeeze=False,
                            sharey=True)
    # Lines in the order their values first appear (the axis declaration order: hot before cold),
    # numeric values ascending.
    first_seen = {}
    for p in sorted(points, key=lambda p: [sort_key(v) if is_number(v) else (1, 0, "")
                                           for v in line_key(p)]):
        first_seen.setdefault(line_key(p), len(first_seen))
    all_line_keys = sorted(first_seen, key=first_seen.get)
    cmap = plt.get_cmap("tab10" if len(all_line_keys) <= 10 else "tab20")
    colors = {k: cmap(i % cmap.N) for i, k in enumerate(all_line_keys)}
    markers = "osD^vP*Xh<>"

    units = sorted({p.metric.get("unit") or "" for p in points})
    names = sorted({p.metric.get("name") or "" for p in points})
    tags = sorted({p.metric["tag"] for p in points})
    y_name = names[0] if len(names) == 1 else (common_word_suffix(names) or spec.y)
    if len(names) > 1 and len(tags) == 1 and y_name != spec.y:
        y_name = f"{tags[0].split('/')[0]} {y_name}"  # 'sgemm rate', 'dgemm rate' -> 'gemm rate'
    if len(tags) > 1 and len(names) > 1 and y_name == "":
        y_name = spec.y
    y_label = y_name + (f" [{units[0]}]" if len(units) == 1 and units[0] else "")
    if len(units) > 1:
        y_label += " [" + ", ".join(u for u in units if u) + "]"
    x_label = spec.x + (" [bytes]" if size_x and spec.x != "bytes" else "")
    if x_help:
        x_label += f" — {x_help if len(x_help) <= 70 else x_help[:67] + '...'}"

    for i, pk in enumerate(panel_keys):
        ax = axs[i // ncols][i % ncols]
        lines = {}
        for p in panels[pk]:
            lines.setdefault(line_key(p), []).append(p)
        for lk in sorted(lines, key=first_seen.get):
            pts = sorted(lines[lk], key=lambda p: sort_key(p.x))
            xs = [xv(p) for p in pts]
            ys = [p.y for p in pts]
            have_err = any(p.lo is not None for p in pts)
            yerr = None
            if have_err:
                yerr = [[max(0.0, p.y - p.lo) if p.lo is not None else 0.0 for p in pts],
                        [max(0.0, p.hi - p.y) if p.hi is not None else 0.0 for p in pts]]
            idx = all_line_keys.index(lk)
            # text x values are categories: markers only, a line between them would mean nothing
            ax.errorbar(xs, ys, yerr=yerr, color=colors[lk], marker=markers[idx % len(markers)],
                        markersize=5 if numeric_x else 8, linestyle="-" if numeric_x else "none",
                        linewidth=1.6, capsize=3, elinewidth=1, label=line_label(lk))
            pub = [(xv(p), p.published) for p in pts if p.published is not None]
            if pub:
                ax.plot([a for a, _ in pub], [b for _, b in pub], linestyle="none", marker=markers[idx % len(markers)],
                        markerfacecolor="none", markersize=9, color=colors[lk],
                        label=f"{line_label(lk)} (published)")
        if logx:
            ax.set_xscale("log", base=2 if size_x else 10)
        if logy:
            ax.set_yscale("log")
        format_x(ax, x_values, numeric_x, size_x, logx)
        if units == ["s"]:  # seconds read best with SI prefixes: 20 µs, 3 ms
            ax.yaxis.set_major_formatter(ticker.EngFormatter(unit="s", sep=" "))
            if logy:  # label the minor ticks too when the data span less than two decades
                ys_all = [p.y for p in points]
                narrow = math.log10(max(ys_all) / min(ys_all)) < 2
                ax.yaxis.set_minor_formatter(ticker.EngFormatter(unit="s", sep=" ") if narrow
                                             else ticker.NullFormatter())
        elif not logy:
            ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:,.6g}"))
        if not logy:
            ax.set_ylim(bottom=0 if all(p.y >= 0 for p in points) else None)
        ax.grid(True, which="major", alpha=0.35)
        ax.grid(True, which="minor", alpha=0.12)
        if panel_axes:
            ax.set_title(", ".join(f"{a}={axis_value_text(v, report.axis_info(exp, a)[0])}"
                                   for a, v in zip(panel_axes, pk)), fontsize=10)
        if i // ncols == nrows - 1 or i + ncols >= n:
            ax.set_xlabel(x_label)
        if i % ncols == 0:
            ax.set_ylabel(y_label)
    for k in range(n, nrows * ncols):
        axs[k // ncols][k % ncols].set_visible(False)

    handles, labels = axs[0][0].get_legend_handles_labels()
    seen = set(labels)
    for i in range(1, n):
        h, l = axs[i // ncols][i % ncols].get_legend_handles_labels()
        for hh, ll in zip(h, l):
            if ll not in seen:
                seen.add(ll)
                handles.append(hh)
                labels.append(ll)
    if len(labels) > 1 or series_axes or split_by_tag:
        if n == 1:
            axs[0][0].legend(handles, labels, title=legend_title or None, fontsize=9, title_fontsize=9,
                             loc="best", framealpha=0.85)
        else:
            # outside the top-right panel; savefig's tight bounding box makes room for it
            axs[0][ncols - 1].legend(handles, labels, title=legend_title or None, fontsize=9, title_fontsize=9,
                                     loc="upper left", bbox_to_anchor=(1.02, 1.0), framealpha=0.85)

    title = spec.title or (report.experiments.get(exp) or {}).get("title") or spec.artifact
    fig_width = fig.get_size_inches()[0]
    fig.suptitle(textwrap.fill(title, width=max(40, int(fig_width * 8.5))), fontsize=13, fontweight="bold")
    foot = [report.subtitle(), f"{spec.artifact}: {spec.y} vs {spec.x}"]
    fixed = fixed_axes(points, {spec.x}, exp, report)
    if fixed:
        foot.append("fixed: " + ", ".join(fixed))
    eb = error_bar_kind(points)
    if eb:
        foot.append(eb)
    fig.text(0.5, 0.005, "\n".join([foot[0], "   ".join(foot[1:])]), ha="center", va="bottom", fontsize=8,
             color="0.35")
    fig.tight_layout(rect=(0, 0.06 if nrows == 1 else 0.04, 1, 0.95))
    fig.savefig(path, dpi=120, bbox_inches="tight", pad_inches=0.15)
    plt.close(fig)
    return True


def format_x(ax, x_values, numeric_x, size_x, logx):
    if not numeric_x:
        ax.set_xticks(range(len(x_values)))
        ax.set_xticklabels([str(v) for v in x_values], rotation=30 if len(x_values) > 6 else 0)
        ax.set_xlim(-0.5, len(x_values) - 0.5)
        return
    fmt = binary_size if size_x else plain_number
    if len(x_values) <= 12:
        ax.xaxis.set_major_locator(ticker.FixedLocator(x_values))
        ax.xaxis.set_minor_locator(ticker.NullLocator())
    elif logx and size_x:
        # powers of two, every 1, 2, 5 or 10 doublings (10: 1K, 1M, 1G), at most about 11 ticks
        lo, hi = math.floor(math.log2(min(x_values))), math.ceil(math.log2(max(x_values)))
        step = next((s for s in (1, 2, 5, 10, 20) if (hi - lo) / s <= 10), 20)
        ticks = [2.0 ** k for k in range(lo, hi + 1) if k % step == 0]
        ax.xaxis.set_major_locator(ticker.FixedLocator(ticks))
        ax.xaxis.set_minor_locator(ticker.NullLocator())
    elif logx:
        return  # matplotlib's 10^k labels
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: fmt(v)))
    labels = [fmt(v) for v in ax.get_xticks()]
    if sum(len(s) for s in labels) > 60:
        for label in ax.get_xticklabels():
            label.set_rotation(30)
            label.set_ha("right")


# ---------------------------------------------------------------------------------------------
# which figures


def specs_from_report(report):
    specs = []
    keys = list(report.experiments)
    for r in report.results:
        if isinstance(r.get("experiment"), str) and r["experiment"] not in keys:
            keys.append(r["experiment"])
    for key in keys:
        exp = report.experiments.get(key) if isinstance(report.experiments.get(key), dict) else {}
        plots = [p for p in exp.get("plots") or [] if isinstance(p, dict)]
        if plots:
            for p in plots:
                if isinstance(p.get("x"), str) and isinstance(p.get("y"), str):
                    specs.append(FigureSpec(key, p.get("artifact") or exp.get("artifact") or key, p["x"], p["y"],
                                            p.get("series") or [], p.get("logx", True), p.get("logy", False),
                                            p.get("title")))
            continue
        specs.extend(fallback_specs(report, key, exp))
    return specs


def fallback_specs(report, key, exp):
    """First numeric axis with more than one value against each headline metric, per artifact."""
    specs = []
    artifacts = []
    for r in report.results:
        if r.get("experiment") == key and r.get("status") == "passed" and r.get("artifact") not in artifacts:
            artifacts.append(r.get("artifact"))
    for artifact in artifacts:
        results = report.passed(artifact)
        names = []
        for r in results:
            for k in r.get("axes") or {}:
                if k not in names:
                    names.append(k)
        x = None
        for k in names:
            values = [(r.get("axes") or {}).get(k) for r in results]
            if all(is_number(v) for v in values) and len(set(values)) > 1:
                x = k
                break
        if x is None:
            continue
        xs = [r["axes"][x] for r in results]
        logx = min(xs) > 0 and max(xs) / min(xs) >= 16
        series = [k for k in names if k != x]
        tags = []
        for r in results:
            for m in r.get("metrics") or []:
                if isinstance(m, dict) and m.get("headline") and m.get("tag") not in tags:
                    tags.append(m.get("tag"))
        for tag in tags:
            if isinstance(tag, str):
                specs.append(FigureSpec(key, artifact, x, tag, series, logx, False, exp.get("title")))
    return specs


def main(argv):
    if len(argv) >= 2 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(argv) != 3:
        print("usage: plot_report.py REPORT.json OUTDIR", file=sys.stderr)
        return 2
    report_path, outdir = argv[1], argv[2]
    try:
        with open(report_path, encoding="utf-8") as f:
            report = Report(json.load(f))
    except (OSError, ValueError) as e:
        print(f"plot_report.py: cannot read report {report_path}: {e}", file=sys.stderr)
        return 1
    try:
        os.makedirs(outdir, exist_ok=True)
    except OSError as e:
        print(f"plot_report.py: cannot create {outdir}: {e}", file=sys.stderr)
        return 2

    written, failed, used = 0, 0, set()
    for spec in specs_from_report(report):
        base = f"{sanitize(spec.artifact)}__{sanitize_y(spec.y)}"
        name = base
        for k in itertools.count(2):
            if name not in used:
                break
            name = f"{base}_{k}"
        path = os.path.join(outdir, name + ".png")
        try:
            if draw(report, spec, path):
                used.add(name)
                print(path)
                written += 1
        except Exception as e:  # one bad figure must not lose the others
            plt.close("all")
            print(f"plot_report.py: figure {name} ({spec.artifact}: {spec.y} vs {spec.x}) failed: "
                  f"{type(e).__name__}: {e}", file=sys.stderr)
            failed += 1
    if written == 0 and failed == 0:
        print("no figures")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
