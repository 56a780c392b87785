#!/usr/bin/env python3
"""The report of scripts/build-profile.sh: build_profile.py LOG_DIR SCRATCH [PRODUCT].

LOG_DIR/jobs.log has one line per compiler job: start end user sys kind module load. The module
graph comes from SCRATCH/release.yaml (SwiftPM's llbuild manifest). Prints the CPU-seconds per module
(with its package), the critical path (the chain of modules, each waiting on the one before, with the
most CPU-seconds in all), and what the build takes on 2 idle cores when the modules are scheduled:
  - floor: all the CPU split evenly over 2 cores;
  - llbuild: as SwiftPM's llbuild does (of the ready jobs, the one whose command name sorts last
    runs first; C files, whose commands are named by their object's path, run only when nothing
    else is ready);
  - longest path first: the ideal order.
Each module is one job of its CPU-seconds (a release module is one whole-module compile; its LLVM
part runs on 2 threads, which the model leaves out, so it errs on the long side).
"""
import collections
import heapq
import json
import re
import sys

log_dir, scratch = sys.argv[1], sys.argv[2]
product = sys.argv[3] if len(sys.argv) > 3 else "ipcemu"
LANES = 2

cpu = collections.defaultdict(float)
c_modules = set()
first_start = {}
for line in open(f"{log_dir}/jobs.log"):
    fields = line.split()
    if len(fields) < 6:
        continue
    start, user, system, kind, module = float(fields[0]), float(fields[2]), float(fields[3]), fields[4], fields[5]
    cpu[module] += user + system
    first_start.setdefault(module, start)
    if kind == "c":
        c_modules.add(module)

manifest = open(f"{scratch}/release.yaml").read()
suffix = r"-[a-z0-9_]+-unknown-linux-gnu-release"
command = re.compile(r'^  "C\.([^"]+?)' + suffix + r'\.module":\n    tool: [^\n]*\n    inputs: \[([^\]]*)\]', re.M)
deps, package = {}, {}
for match in command.finditer(manifest):
    module, inputs = match.group(1), re.findall(r'"([^"]+)"', match.group(2))
    # Another module's compile or C target is an input as its .swiftmodule or as its "<X-...module>" node.
    deps[module] = {m.group(1) for i in inputs
                    for m in [re.match(r"<(.+?)" + suffix + r"\.module>$", i) or re.search(r"/Modules/([^/]+)\.swiftmodule$", i)]
                    if m} - {module}
    sources = [i for i in inputs if i.endswith(".swift")]
    owner = re.search(r"/checkouts/([^/]+)/", sources[0]) if sources else None
    package[module] = owner.group(1) if owner else "this package"
for module in c_modules:
    owner = re.search(r"/checkouts/([^/]+)/[^\n]*?/" + re.escape(module) + "/", manifest)
    package.setdefault(module, owner.group(1) if owner else "this package")

needed, stack = set(), [product]
while stack:
    module = stack.pop()
    if module not in needed:
        needed.add(module)
        stack.extend(deps.get(module, ()))
cost = {m: cpu.get(m, 0.0) for m in needed}
graph = {m: [d for d in deps.get(m, ()) if d in needed] for m in needed}
users = collections.defaultdict(list)
for module, ds in graph.items():
    for d in ds:
        users[d].append(module)

total = sum(cost.values())
print(f"\nmodules of '{product}': {len(needed)}, {total:.0f} CPU-seconds (compiler jobs only)")
print("\nCPU-seconds per module (the 30 largest):")
for module, seconds in sorted(cost.items(), key=lambda kv: -kv[1])[:30]:
    print(f"  {seconds:6.1f}  {module:30s} {package.get(module, '?')}")
by_package = collections.Counter()
for module, seconds in cost.items():
    by_package[package.get(module, "?")] += seconds
print("\nCPU-seconds per package:")
for name, seconds in by_package.most_common():
    print(f"  {seconds:6.1f}  {name}")

longest_from = {}  # module -> (CPU-seconds of the longest chain ending at it, the chain)
def chain(module):
    if module not in longest_from:
        before = max(graph[module], key=lambda d: chain(d)[0], default=None)
        length, path = chain(before) if before else (0.0, [])
        longest_from[module] = (length + cost[module], path + [module])
    return longest_from[module]
length, path = chain(product)
print(f"\ncritical path: {length:.0f} CPU-seconds: " + " -> ".join(f"{m} ({cost[m]:.0f})" for m in path))

to_end = {}
def tail(module):
    if module not in to_end:
        to_end[module] = cost[module] + max((tail(u) for u in users[module]), default=0.0)
    return to_end[module]

class Descending(str):
    def __lt__(self, other):
        return str.__gt__(self, other)

def simulate(priority):
    waiting = {m: len(graph[m]) for m in needed}
    ready = [(priority(m), m) for m in needed if waiting[m] == 0]
    heapq.heapify(ready)
    running, now, free = [], 0.0, LANES
    while ready or running:
        while ready and free:
            _, module = heapq.heappop(ready)
            heapq.heappush(running, (now + cost[module], module))
            free -= 1
        now, module = heapq.heappop(running)
        free += 1
        for user in users[module]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, (priority(user), user))
    return now

print(f"\non {LANES} idle cores, the compile phase (without resolving, manifests, planning, linking):")
print(f"  floor (CPU / {LANES}):     {total / LANES:5.0f} s")
print(f"  llbuild's order:     {simulate(lambda m: (m in c_modules, Descending(m))):5.0f} s")
print(f"  longest path first:  {simulate(lambda m: -tail(m)):5.0f} s")
