#!/usr/bin/env python3
"""Mutex acquisitions per event in a callgrind profile of the worker.

    scripts/count-locks.py BINARY PROFILE... EVENTS [--by-function]

PROFILE comes from `CALLGRIND_ARGS=--dump-instr=yes scripts/profile-worker.sh callgrind FILE EVENTS` (the file
FILE.1, or one FILE.1-NN per thread with SEPARATE_THREADS=yes: pass them all, FILE.1-*). Swift's `Mutex` takes its lock with one inlined
`lock cmpxchg` and calls `_MutexHandle._lockSlow` only when that fails, so a lock taken is an execution of a
`lock cmpxchg` whose failure branch calls `_lockSlow`: the script finds those instructions in BINARY's disassembly
and sums their execution counts in PROFILE (Ir counts one per executed instruction). It prints the acquisitions per
event, and with --by-function the functions they are in (where the lock's code was inlined)."""
import collections
import re
import subprocess
import sys

LOCK_SLOW = "_MutexHandleV9_lockSlow"


def lock_sites(binary):
    """Addresses of the fast-path `lock cmpxchg` of every inlined Mutex lock in `binary`."""
    listing = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary], capture_output=True, text=True,
                             check=True).stdout
    instructions = []
    for line in listing.splitlines():
        match = re.match(r"\s*([0-9a-f]+):\s+(.*)", line)
        if match:
            instructions.append((int(match.group(1), 16), match.group(2)))
    index_of = {address: index for index, (address, _) in enumerate(instructions)}
    sites = set()
    for index, (address, text) in enumerate(instructions):
        if not text.startswith("lock cmpxchg"):
            continue
        for _, after in instructions[index + 1:index + 5]:
            jump = re.match(r"jne\s+([0-9a-f]+)", after)
            if not jump:
                continue
            target = index_of.get(int(jump.group(1), 16))
            # The failure branch's first call is `_lockSlow` (an unlock's calls `_unlockSlow`).
            calls = [text for _, text in instructions[target:target + 8] if text.startswith("call")] if target else []
            if calls and LOCK_SLOW in calls[0]:
                sites.add(address)
            break
    return sites


def executions(profile, sites):
    """Executions of each site in a callgrind file dumped with --dump-instr=yes, by function."""
    names = {}
    function = None
    address = 0
    after_call = False
    counts = collections.Counter()
    for line in open(profile, errors="replace"):
        if line.startswith(("fn=", "cfn=")):
            # A function's name comes with its number the first time either kind of line names it.
            match = re.match(r"\((\d+)\)(?: (.*))?", line.split("=", 1)[1].strip())
            if match.group(2):
                names[match.group(1)] = match.group(2)
            if line.startswith("fn="):
                function = names.get(match.group(1), match.group(1))
        elif line.startswith("calls="):
            after_call = True
        elif line[:1] in "0123456789+-*":
            fields = line.split()
            position = fields[0]
            if position.startswith("0x"):
                address = int(position, 16)
            elif position[0] in "+-":
                address += int(position)
            if after_call:
                after_call = False
                continue
            if address in sites and len(fields) > 2:
                counts[function] += int(fields[2])
    return counts


def main():
    arguments = [argument for argument in sys.argv[1:] if not argument.startswith("--")]
    if len(arguments) < 3:
        sys.exit(__doc__)
    binary, profiles, events = arguments[0], arguments[1:-1], int(arguments[-1])
    sites = lock_sites(binary)
    counts = collections.Counter()
    for profile in profiles:
        counts.update(executions(profile, sites))
    total = sum(counts.values())
    print(f"{total} mutex acquisitions, {total / events:.2f} per event")
    if "--by-function" in sys.argv:
        demangled = subprocess.run(["swift", "demangle", "--simplified", "--compact"], input="\n".join(counts),
                                   capture_output=True, text=True).stdout.splitlines()
        names = dict(zip(counts, demangled)) if len(demangled) == len(counts) else {}
        for function, count in counts.most_common():
            print(f"{count / events:8.2f}  {names.get(function, function)[:150]}")


main()
