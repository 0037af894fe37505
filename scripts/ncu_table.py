#!/usr/bin/env python3
"""Prints one table from `ncu --csv --metrics ...` output: the profiled
kernel's duration, achieved occupancy, SM and DRAM throughput (% of peak),
registers per thread, and local-memory (spill) traffic. Usage:
ncu_table.py LABEL FILE.csv; exits 1 when the file holds no metric row."""
import csv
import sys

NAMES = {
    "gpu__time_duration.sum": "duration",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved occupancy",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "SM throughput (% of peak)",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "DRAM throughput (% of peak)",
    "launch__registers_per_thread": "registers per thread",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum": "local loads (spills), sectors",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum": "local stores (spills), sectors",
}


def main():
    label, path = sys.argv[1], sys.argv[2]
    rows = []
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]
    for r in csv.DictReader(lines):
        if r.get("Metric Name") in NAMES:
            rows.append(r)
    if not rows:
        return 1
    kernel = rows[0].get("Kernel Name", "?")
    print(f"profile {label}: {kernel[:90]}")
    for r in rows:
        unit = r.get("Metric Unit", "")
        print(f"  {NAMES[r['Metric Name']]:<34} {r['Metric Value']:>14} {unit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
