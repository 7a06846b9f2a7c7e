#!/usr/bin/env python3
"""What a run's Newton iterations cost, from `bristle bench --brush --iteration-log FILE`.

Prints, from the log's records (one per Newton iteration, docs/cli.md):

- by kind of iteration (each attempt's first solve, later iterations over every bristle, later
  iterations over the bristles still moving): how many, their wall time, milliseconds each,
  and milliseconds per bristle solved;
- for the iterations over the moving bristles, a least-squares line through their times
  against the bristles each solved: seconds = fixed + per_rod * rods_solved. `fixed` is what
  such an iteration costs whatever it solves (passes over the whole brush), `per_rod` what each
  bristle it solves adds; compare per_rod with the full iterations' milliseconds per bristle;
- with --bins B, the same kinds by the attempt's end time, in B equal windows of the run.

The times are wall times: they vary from run to run and with the machine's load, unlike the
log's other fields. Only the standard library is used. Exits 2 on a file it cannot read.

  build/bristle bench --brush --tilt 0.9 --iteration-log it.jsonl
  python3 tools/iteration-cost.py it.jsonl --bins 6
"""

import argparse
import json
import math
import signal
import sys

KINDS = ("first solve", "over every bristle", "over the moving ones")
KEYS = ("t", "iteration", "partial", "rods_solved", "seconds")


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def kind_of(record):
    if record["iteration"] == 0:
        return KINDS[0]
    return KINDS[2] if record["partial"] else KINDS[1]


def read_records(path):
    records = []
    with open(path, encoding="utf-8") as log:
        for number, line in enumerate(log, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as error:
                raise ValueError(f"{path}:{number}: not an iteration record ({error})") from error
            missing = [key for key in KEYS if not isinstance(record, dict) or key not in record]
            if missing:
                raise ValueError(f"{path}:{number}: not an iteration record (no {', '.join(missing)})")
            wrong = [key for key in KEYS if key != "partial" and not is_number(record[key])]
            if wrong or not isinstance(record["partial"], bool):
                raise ValueError(f"{path}:{number}: not an iteration record (not a number or flag: "
                                 f"{', '.join(wrong) or 'partial'})")
            records.append(record)
    return records


def table(records, indent=""):
    rows = []
    for kind in KINDS:
        chosen = [r for r in records if kind_of(r) == kind]
        seconds = sum(r["seconds"] for r in chosen)
        rods = sum(r["rods_solved"] for r in chosen)
        each = 1e3 * seconds / len(chosen) if chosen else 0.0
        per_rod = 1e3 * seconds / rods if rods else 0.0
        rows.append((kind, len(chosen), seconds, each, per_rod))
    print(f"{indent}{'iterations':<22} {'count':>6} {'seconds':>9} {'ms each':>9} {'ms per bristle':>15}")
    for kind, count, seconds, each, per_rod in rows:
        print(f"{indent}{kind:<22} {count:>6} {seconds:>9.3f} {each:>9.2f} {per_rod:>15.4f}")
    return rows


def line_fit(points):
    """Least squares y = a + b x; (a, b), or None for fewer than two distinct x."""
    n = len(points)
    if n < 2:
        return None
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    if sxx == 0.0:
        return None
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sxx
    return mean_y - slope * mean_x, slope


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head, as other tools
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", help="the JSON-lines file of bench --brush --iteration-log")
    parser.add_argument("--bins", type=int, default=0, help="also by the attempts' end time, in B windows")
    args = parser.parse_args()
    if args.bins < 0:
        parser.error("--bins must be 0 or more")
    try:
        records = read_records(args.log)
    except (OSError, ValueError) as error:
        print(f"iteration-cost: {error}", file=sys.stderr)
        return 2
    if not records:
        print(f"iteration-cost: {args.log} holds no records", file=sys.stderr)
        return 2
    total = sum(r["seconds"] for r in records)
    print(f"{len(records)} Newton iterations, {total:.3f} s in all")
    table(records)
    partial = [(r["rods_solved"], r["seconds"]) for r in records if kind_of(r) == KINDS[2]]
    fit = line_fit(partial)
    if fit is not None:
        fixed, per_rod = fit
        mean_rods = sum(x for x, _ in partial) / len(partial)
        print(
            f"over the moving ones: {1e3 * fixed:.2f} ms + {1e3 * per_rod:.4f} ms per bristle solved "
            f"(mean {mean_rods:.1f} bristles; the fixed part {100 * fixed * len(partial) / total:.0f}% of all the time)"
        )
    if args.bins > 0:
        start = min(r["t"] for r in records)
        end = max(r["t"] for r in records)
        width = (end - start) / args.bins if end > start else 1.0
        for b in range(args.bins):
            low = start + b * width
            chosen = [
                r for r in records
                if low <= r["t"] < low + width or (b == args.bins - 1 and r["t"] == end)
            ]
            print(f"\nt in [{low:.4g}, {low + width:.4g}) s: {len(chosen)} iterations")
            table(chosen, "  ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
