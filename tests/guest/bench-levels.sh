#!/bin/bash
# timeout: 600
# Benchmark (not a test): the collective switch above the core, on the
# patched kernel booted with cosched_max_level=3 (tests/bench.sh, its
# levels section, in boots of their own).  For each level L from 2 to
# the highest the guest offers, on the first span of L: a group G
# coscheduled at L with a spinner on every other CPU of the span, against
# a plain group P with a spinner on every CPU of it, for
# cosched.bench_seconds= (default 5), the sched_cosched_switch and
# sched_switch events in one trace instance (tests/tools/switchtrace):
#   lat-follow-p50-lL, -p99-lL  decision -> last CPU followed (us)
#   lat-drain-p50-lL, -p99-lL   decision -> new owner published (us)
#   switches-lL                 collective switches per second
#   switching-pct-lL            % of the time the span spent switching
#                               (decision to last CPU followed)
#   fi-pct-lL                   idle time of the span's CPUs in G's
#                               settled turns (last CPU followed to next
#                               decision), % of those turns x the span's
#                               CPUs: forced idle, as P is runnable on
#                               every CPU and G leaves half of them idle
# Each "bench KEY VALUE" goes to the log; the script passes when every
# level gave its values.
. "$(dirname "$0")/lib.sh"
test_init bench-levels
require_cosched
S=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^cosched.bench_seconds=//p' | tail -1)
S=${S:-${BENCH_SECONDS:-5}}
T=/sys/kernel/tracing
log "bench-info max_level ${MAX_LEVEL:-none}"
log "bench-info release $(uname -r)"
tracefs_ready || fail "no tracefs"
[ -e $T/events/sched/sched_cosched_switch ] || { fail "no sched_cosched_switch event"; finish "no tracepoint"; }

for ((l = 2; l <= ${MAX_LEVEL:-0}; l++)); do
	span=$(head -1 "$COSCHED_SYSFS/levels/$l/spans" | awk '{ print $1 }')
	cpus=$(for r in ${span//,/ }; do seq -s' ' "${r%-*}" "${r#*-}"; done | tr '\n' ' ')
	half=$(echo $cpus | awk '{ for (i = 1; i <= NF; i += 2) printf "%s ", $i }')
	g=G$l p=P$l
	cg_create $g; cg_cpus $g "$span"
	cg_create $p; cg_cpus $p "$span"
	for c in $half; do spin_in $g $c; done
	for c in $cpus; do spin_in $p $c; done
	sleep 0.5
	cg_sched $g "$l" || { fail "cannot coschedule $g at level $l"; spinners_stop; continue; }
	sleep 1
	trace_record "$S" "trace$l" sched_switch sched_cosched_switch || fail "level $l: no trace"
	switchtrace --level $l --gid "$(cg_id "$g")" --cpus "$span" \
		--g "$(tr '\n' ' ' < "$(cg_dir $g)/cgroup.procs")" --p "$(tr '\n' ' ' < "$(cg_dir $p)/cgroup.procs")" \
		"$WORK/trace$l" > "$WORK/l$l"
	sed 's/^/# /' "$WORK/l$l"
	spinners_stop
	cg_sched $g 0
	n=$(kv l$l ev level=$l events)
	if [ "${n:-0}" -lt 1 ]; then fail "level $l: no switch traced"; continue; fi
	[ "$(kv l$l ev level=$l missed)" = 0 ] || log "# level $l: $(kv l$l ev level=$l missed) switches missed (not traced)"
	log "bench lat-follow-p50-l$l $(kv l$l lat level=$l follow_p50_us)"
	log "bench lat-follow-p99-l$l $(kv l$l lat level=$l follow_p99_us)"
	log "bench lat-drain-p50-l$l $(kv l$l lat level=$l drain_p50_us)"
	log "bench lat-drain-p99-l$l $(kv l$l lat level=$l drain_p99_us)"
	log "bench switches-l$l $(awk -v n="$n" -v s="$S" 'BEGIN { printf "%.1f", n / s }')"
	log "bench switching-pct-l$l $(kv l$l run level=$l switch_pct)"
	log "bench fi-pct-l$l $(kv l$l idle level=$l fi_pct)"
done
[ "${MAX_LEVEL:-0}" -ge 2 ] || fail "max_level ${MAX_LEVEL:-none}: no level above the core"
finish "levels 2..${MAX_LEVEL:-?} measured"
