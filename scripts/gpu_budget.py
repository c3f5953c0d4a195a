#!/usr/bin/env python3
"""The GPU kernels' resource budget, checked without a GPU.

Compiles the CUDA backend's translation unit once more with `-Xptxas -v` (the exact flags of the
CMake build, read from compile_commands.json, for sm_90 only), reads what ptxas reports per kernel
(registers, stack frame, spill stores and loads), names each kernel by the smash functor it runs,
and compares it with kernels/gpu_budget.txt:

  * every kernel that runs a smash functor must be listed there with its dimension — a new kernel
    cannot slip in unclassified;
  * a wide kernel (dimension particle, chunk, candidate, contact, pair-point) must not spill, must
    not use a stack frame, and must fit in its register budget (64 unless the file says otherwise,
    with the reason on the line);
  * per-body and per-pair kernels are reported, and held to the limits their line gives ('-' means
    not checked: the line says why).

Writes the report to BUILD/gpu-budget.txt (and ptxas' own output to BUILD/ptxas-v.log) and exits
1 when a budget is broken.

    scripts/gpu_budget.py [--build build/ci] [--budget kernels/gpu_budget.txt]
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

WIDE = {"particle", "chunk", "candidate", "contact", "pair-point"}
# The functor a Thrust for_each kernel runs (op_wrapper_t<index, Functor, iterator>), or one a
# hand-written kernel names as its first smash::pipeline template argument.
FUNCTOR = re.compile(r"(?:op_wrapper_t<long, |op_wrapper_t<int, |wrapped_function<|kernels?<)smash::pipeline::(?:\(anonymous namespace\)::)?([A-Z][A-Za-z0-9_]*)")


def read_budget(path):
    budget = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 4)
            if len(parts) < 4:
                sys.exit(f"{path}:{number}: expected 'functor dimension max_registers max_stack [reason]'")
            name, dimension, regs, stack = parts[:4]
            reason = parts[4] if len(parts) > 4 else ""
            if dimension not in WIDE | {"body", "pair", "other"}:
                sys.exit(f"{path}:{number}: unknown dimension '{dimension}'")
            limit = lambda v: None if v == "-" else int(v)
            if dimension in WIDE and (regs == "-" or stack == "-" or int(stack) != 0 or int(regs) > 64) and not reason:
                sys.exit(f"{path}:{number}: a wide kernel above 64 registers or with a stack needs a reason")
            budget[name] = {"dimension": dimension, "regs": limit(regs), "stack": limit(stack), "reason": reason}
    return budget


def compile_with_ptxas_report(build):
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        entry = next(e for e in json.load(f) if e["file"].endswith("kernels/backend_cuda.cu"))
    args = shlex.split(entry["command"])
    out = tempfile.NamedTemporaryFile(suffix=".cubin", delete=False).name
    cleaned = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-c"):
            skip = a == "-o"
            continue
        if a.startswith("--generate-code") or a.startswith("-gencode"):
            continue
        cleaned.append(a)
    cleaned += ["-arch=sm_90", "-cubin", "-Xptxas", "-v", "-o", out]
    run = subprocess.run(cleaned, cwd=entry["directory"], capture_output=True, text=True)
    os.unlink(out) if os.path.exists(out) else None
    if run.returncode != 0:
        sys.stderr.write(run.stdout + run.stderr)
        sys.exit(f"nvcc failed ({run.returncode})")
    return run.stdout + run.stderr


def parse(report):
    """Per kernel: registers, stack frame (the kernel's own, or the cumulative one with its
    callees when ptxas gives it) and spill bytes. ptxas prints 'Function properties for F' and
    then F's frame on the next line, for the kernel and for every non-inlined callee."""
    kernels = {}
    current = None
    properties_of = None
    for line in report.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            current = m.group(1)
            kernels[current] = {"stack": 0, "spill_stores": 0, "spill_loads": 0, "regs": 0}
            continue
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            properties_of = m.group(1)
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            k = kernels[current]
            # A callee's frame (printed after its caller) counts for the kernel too, unless ptxas
            # gives the cumulative stack size, which already includes it.
            key = "own" if properties_of == current else "callees"
            k[key] = k.get(key, 0) + int(m.group(1))
            k["spill_stores"] += int(m.group(2))
            k["spill_loads"] += int(m.group(3))
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m:
            kernels[current]["regs"] = int(m.group(1))
        m = re.search(r"(\d+) bytes cumulative stack size", line)
        if m:
            kernels[current]["cumulative"] = int(m.group(1))
    for k in kernels.values():
        k["stack"] = k["cumulative"] if "cumulative" in k else k.get("own", 0) + k.get("callees", 0)
    return kernels


def demangle(names):
    if not names:
        return {}
    run = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
    return dict(zip(names, run.stdout.splitlines()))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(here, "..", "build", "ci"))
    parser.add_argument("--budget", default=os.path.join(here, "..", "kernels", "gpu_budget.txt"))
    parser.add_argument("--report", help="read a saved ptxas -v log instead of compiling")
    args = parser.parse_args()

    budget = read_budget(args.budget)
    if args.report:
        with open(args.report, encoding="utf-8") as f:
            report = f.read()
    else:
        report = compile_with_ptxas_report(args.build)
        os.makedirs(args.build, exist_ok=True)
        with open(os.path.join(args.build, "ptxas-v.log"), "w", encoding="utf-8") as f:
            f.write(report)  # the raw report, for --report and for reading
    kernels = parse(report)
    if not kernels:
        sys.exit("ptxas reported no kernels: was the CUDA build configured?")
    readable = demangle(list(kernels))

    # A functor may be instantiated in several kernels (index types): keep the worst of each.
    worst = {}
    for mangled, usage in kernels.items():
        functors = FUNCTOR.findall(readable[mangled])
        if not functors:
            continue  # Thrust's own kernels (sorts, scans, fills, copies of smash data)
        name = functors[0]
        w = worst.setdefault(name, {"regs": 0, "stack": 0, "spill": 0, "kernels": 0})
        w["regs"] = max(w["regs"], usage["regs"])
        w["stack"] = max(w["stack"], usage["stack"])
        w["spill"] = max(w["spill"], usage["spill_stores"] + usage["spill_loads"])
        w["kernels"] += 1

    failures = []
    lines = [f"{'functor':26} {'dimension':11} {'regs':>5} {'stack':>6} {'spill':>6}  verdict"]
    for name in sorted(worst):
        w = worst[name]
        b = budget.get(name)
        if b is None:
            failures.append(f"{name}: not in {os.path.basename(args.budget)} (classify it: which dimension is it parallel over?)")
            verdict = "UNCLASSIFIED"
            dimension = "?"
        else:
            dimension = b["dimension"]
            problems = []
            if b["regs"] is not None and w["regs"] > b["regs"]:
                problems.append(f"{w['regs']} registers > {b['regs']}")
            if b["stack"] is not None and w["stack"] > b["stack"]:
                problems.append(f"{w['stack']} B stack > {b['stack']}")
            if dimension in WIDE and w["spill"] > 0:
                problems.append(f"spills {w['spill']} B")
            if problems:
                failures.append(f"{name} ({dimension}): " + ", ".join(problems))
            verdict = "over budget: " + ", ".join(problems) if problems else ("ok" if not b["reason"] else "ok (" + b["reason"] + ")")
        lines.append(f"{name:26} {dimension:11} {w['regs']:5} {w['stack']:6} {w['spill']:6}  {verdict}")
    for name in sorted(set(budget) - set(worst)):
        # Listed but not found: the functor is gone (remove its line) or the kernel names changed
        # so that nothing is being checked (a CCCL update): either way, say so.
        failures.append(f"{name}: listed but found in no kernel (removed functor, or kernel names this script no longer reads)")
        lines.append(f"{name:26} {budget[name]['dimension']:11} {'':>5} {'':>6} {'':>6}  NOT FOUND")
    text = "ptxas -v, sm_90, kernels/backend_cuda.cu (static: no GPU needed)\n" + "\n".join(lines) + "\n"
    os.makedirs(args.build, exist_ok=True)
    with open(os.path.join(args.build, "gpu-budget.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    sys.stdout.write(text)
    if failures:
        sys.stdout.write("\nGPU budget broken:\n  " + "\n  ".join(failures) + "\n")
        return 1
    sys.stdout.write("GPU budget: every kernel within its budget\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
