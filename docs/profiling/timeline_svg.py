#!/usr/bin/env python3
"""Draws a trace written by our driver (IREE_HIP_TRACE_FILE, Chrome trace-event JSON) as an
SVG timeline: per GPU, its queue operations' spans on the device with the dispatches inside
them, and the host's submissions of those operations.

usage: timeline_svg.py TRACE.json OUT.svg [--title TEXT] [--last-ms N]
  --last-ms: draw only the last N milliseconds of the trace (e.g. the program's call after
             module loading)
"""

import argparse
import colorsys
import hashlib
import html
import json
import re

WIDTH, LEFT, ROW, GAP = 1100, 190, 26, 10


def color(name):
    hue = int(hashlib.md5(name.encode()).hexdigest()[:4], 16) / 65535
    r, g, b = colorsys.hls_to_rgb(hue, 0.62, 0.55)
    return f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("trace")
    parser.add_argument("out")
    parser.add_argument("--title", default="")
    parser.add_argument("--last-ms", type=float)
    args = parser.parse_args()
    events = json.load(open(args.trace))["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    spans = [e for e in events if e.get("ph") == "X"]
    end = max(e["ts"] + e["dur"] for e in spans)
    start = min(e["ts"] for e in spans)
    if args.last_ms:
        start = max(start, end - args.last_ms * 1000)
    spans = [e for e in spans if e["ts"] + e["dur"] >= start]
    scale = (WIDTH - LEFT - 20) / max(end - start, 1)

    def x(ts):
        return LEFT + (max(ts, start) - start) * scale

    rows = []  # (label, [events], category filter)
    for key in sorted(names):
        track = [e for e in spans if (e["pid"], e["tid"]) == key]
        if not track:
            continue
        if any(e["cat"] == "queue" for e in track):
            rows.append((names[key] + " (queue)", [e for e in track if e["cat"] == "queue"]))
            rows.append((names[key] + " (dispatches)", [e for e in track if e["cat"] == "dispatch"]))
        else:
            rows.append((names[key], track))
    height = 60 + len(rows) * (ROW + GAP) + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
           f'<text x="10" y="20" font-size="14" font-weight="bold">{html.escape(args.title)}</text>']
    y = 40
    for label, track in rows:
        out.append(f'<text x="10" y="{y + ROW * 0.65}">{html.escape(label[:30])}</text>')
        out.append(f'<rect x="{LEFT}" y="{y}" width="{WIDTH - LEFT - 20}" height="{ROW}" fill="#f3f3f3"/>')
        for e in track:
            x0, x1 = x(e["ts"]), x(e["ts"] + e["dur"])
            w = max(x1 - x0, 1.0)
            fill = "#9bb7d4" if e["cat"] == "queue" else "#a5d6a7" if e["cat"] == "submission" else color(e["name"])
            tip = f'{e["name"]}: {e["dur"]:.1f} us'
            out.append(f'<rect x="{x0:.1f}" y="{y + 2}" width="{w:.1f}" height="{ROW - 4}" fill="{fill}" stroke="#555" stroke-width="0.3"><title>{html.escape(tip)}</title></rect>')
            # Dispatches are labelled by ordinal and kind ("2 matmul"); the tooltip has the name.
            short = re.search(r"_dispatch_(\d+)_([a-z]+)", e["name"])
            text = f"{short.group(1)} {short.group(2)}" if short else e["name"]
            if w > 6.2 * len(text):
                out.append(f'<text x="{x0 + 3:.1f}" y="{y + ROW * 0.65}" font-size="10">{html.escape(text)}</text>')
        y += ROW + GAP
    # Time axis in milliseconds.
    span_ms = (end - start) / 1000
    step = next(s for s in (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000) if span_ms / s <= 12)
    tick = 0.0
    while tick <= span_ms + 1e-9:
        tx = LEFT + tick * 1000 * scale
        out.append(f'<line x1="{tx:.1f}" y1="{y}" x2="{tx:.1f}" y2="{y + 5}" stroke="black"/>')
        out.append(f'<text x="{tx:.1f}" y="{y + 17}" text-anchor="middle">{tick:g} ms</text>')
        tick += step
    out.append("</svg>")
    with open(args.out, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
