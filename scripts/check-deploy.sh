#!/usr/bin/env bash
# Checks deploy/kubernetes/: every manifest is a valid Kubernetes object (strict schema validation
# with kubernetes-validate from PyPI, installed here if missing), and the fleet Job's shard count
# agrees with its completions and parallelism. Exit 0 when all is well; the first problem otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-deploy/kubernetes}"

if ! command -v kubernetes-validate >/dev/null 2>&1; then
  python3 -m pip install -q --disable-pip-version-check kubernetes-validate >/dev/null 2>&1 \
    || python3 -m pip install -q --disable-pip-version-check --break-system-packages kubernetes-validate
fi

# Every YAML file of the folder except Helm values (not Kubernetes objects).
manifests=()
for f in "$dir"/*.yaml; do
  case "$f" in *-values.yaml) continue ;; esac
  manifests+=("$f")
done
kubernetes-validate --strict --quiet "${manifests[@]}"

python3 - "$dir/fleet-job.yaml" <<'PY'
import re, sys, yaml
job = yaml.safe_load(open(sys.argv[1]))
spec = job["spec"]
assert spec.get("completionMode") == "Indexed", "fleet Job must be an Indexed Job"
args = " ".join(spec["template"]["spec"]["containers"][0]["args"])
m = re.search(r'--shard "?\$\{JOB_COMPLETION_INDEX\}/(\d+)"?', args)
assert m, "fleet Job must pass --shard ${JOB_COMPLETION_INDEX}/N"
n = int(m.group(1))
assert spec["completions"] == n, f"completions {spec['completions']} != shard count {n}"
assert spec["parallelism"] == n, f"parallelism {spec['parallelism']} != shard count {n}"
ann = spec["template"]["metadata"]["annotations"]
assert ann.get("prometheus.io/scrape") == "true", "pods need the Prometheus scrape annotation"
print(f"check-deploy: fleet Job ok: {n} shards, Indexed, scraped")
PY
echo "check-deploy: ${#manifests[@]} manifests valid"
