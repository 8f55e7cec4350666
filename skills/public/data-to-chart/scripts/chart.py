"""CSV/TSV → SVG bar or line chart, standard library only.

python3 chart.py data.csv --label month --value revenue --kind line --title T --out chart.svg
"""

from __future__ import annotations

import argparse
import csv
import sys
from html import escape
from pathlib import Path

W, H, PAD = 800, 400, 60
MAX_POINTS = 30


def read_rows(path: Path, label: str | None, value: str | None) -> list[tuple[str, float]]:
    text = path.read_text(encoding="utf-8-sig")
    dialect = csv.Sniffer().sniff(text[:2048], delimiters=",;\t")
    reader = csv.DictReader(text.splitlines(), dialect=dialect)
    fields = reader.fieldnames or []
    if len(fields) < 2:
        sys.exit("need at least two columns")
    label = label or fields[0]
    value = value or fields[1]
    if label not in fields or value not in fields:
        sys.exit(f"columns are: {', '.join(fields)}")
    rows = []
    for row in reader:
        try:
            rows.append((row[label], float(str(row[value]).replace(",", ""))))
        except (TypeError, ValueError):
            continue
    return rows[:MAX_POINTS]


def svg(rows: list[tuple[str, float]], kind: str, title: str) -> str:
    top = max((v for _, v in rows), default=1) or 1
    step = (W - 2 * PAD) / max(len(rows), 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
        'font-family="sans-serif" font-size="11">',
        f'<rect width="{W}" height="{H}" fill="white"/>',
        f'<text x="{W / 2}" y="24" text-anchor="middle" font-size="16">{escape(title)}</text>',
        f'<line x1="{PAD}" y1="{H - PAD}" x2="{W - PAD}" y2="{H - PAD}" stroke="#333"/>',
        f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{H - PAD}" stroke="#333"/>',
        f'<text x="{PAD - 6}" y="{PAD + 4}" text-anchor="end">{top:g}</text>',
    ]
    points = []
    for i, (name, val) in enumerate(rows):
        x = PAD + i * step
        h = (H - 2 * PAD) * max(val, 0) / top
        if kind == "bar":
            parts.append(
                f'<rect x="{x + step * 0.1:.1f}" y="{H - PAD - h:.1f}" '
                f'width="{step * 0.8:.1f}" height="{h:.1f}" fill="#4e79a7"/>'
            )
        points.append(f"{x + step / 2:.1f},{H - PAD - h:.1f}")
        parts.append(
            f'<text x="{x + step / 2:.1f}" y="{H - PAD + 14}" text-anchor="middle">'
            f"{escape(name[:12])}</text>"
        )
    if kind == "line":
        parts.append(
            f'<polyline points="{" ".join(points)}" fill="none" stroke="#4e79a7" stroke-width="2"/>'
        )
    parts.append("</svg>")
    return "\n".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data", type=Path)
    ap.add_argument("--label")
    ap.add_argument("--value")
    ap.add_argument("--kind", choices=["bar", "line"], default="bar")
    ap.add_argument("--title", default="")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    rows = read_rows(args.data, args.label, args.value)
    if not rows:
        sys.exit("no numeric rows found")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(svg(rows, args.kind, args.title), encoding="utf-8")
    print(f"wrote {args.out} ({len(rows)} points)")


if __name__ == "__main__":
    main()
