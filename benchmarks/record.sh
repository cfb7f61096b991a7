# Sourced by the benchmark scripts (after they cd to the repository and set $out).
# record NAME COMMAND...: runs COMMAND, its stdout (the run's Markdown) shown and written to
# $out/NAME.md after a first line that names the command, the date and the host, which
# benchmarks/results-doc.mjs reads into docs/results.md.
record() {
  local name=$1
  shift
  mkdir -p "$out"
  { printf '%s (%s, %s)\n\n' "$*" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(hostname)"; "$@"; } | tee "$out/$name.md"
}
