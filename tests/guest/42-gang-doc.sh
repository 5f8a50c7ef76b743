#!/bin/bash
# timeout: 210
# Fairness and gang as sched-cosched.rst promises them (issue 9 point 5),
# three cases on the SMT pair CPU 2/3, a coscheduled group G against a
# plain cgroup P, equal cpu.weight (100/100), all judged on corun's trace
# view (what the scheduler ran), exclusion on what executed (raw):
#
# (a) asymmetric load: G has one spinner g2 on CPU 2; P has p2 on CPU 2 and
#     p3 on CPU 3.  sched-cosched.rst ("Sharing a core", measured there):
#     G holds the core (g2 runs, CPU 3 forced idle) 50% +- 10 of the held
#     time, and gets 40% +- 10 of the run time (in half of P's turns CPU
#     2's runqueue prefers g2, which may not run beside P: CPU 2 idles).
#     G/P never at once.
# (b) a gang g2+g3 against w3, a task of P on CPU 3 that wakes 1000 times
#     a second (sleeps 1 ms, runs 100 us), first with G NOT coscheduled
#     (the control, same boot), then coscheduled.  w3 asks for ~9% of a
#     CPU, less than its fair share, so weights give it all it asks: its
#     run time coscheduled >= 80% of the control's.  The gang runs
#     together more than in the control, by >= 2 points, the median of 3
#     alternated pairs (under TCG the followers' lag bounds co-run near
#     88%, see sched-cosched.rst); w3
#     never executes at once with the gang.  Wakeups per second and oversleep
#     (wakeup latency) are printed.
# (c) a sibling whose best task is the gang's while untagged work is
#     runnable there: G has g2 (CPU 2, alone there) and g3 (CPU 3), P has
#     p3 on CPU 3.  sched-cosched.rst: CPU 3's runqueue gives p3 two thirds
#     (p3 carries all of P's weight there, g3 half of G's), so P holds the
#     core 67% +- 10 of the held time and G and P get equal run time
#     (G 50% +- 10); the gang runs together >= 80% (TCG), G/P never at once.
# Forced idle per CPU (trace: a CPU ran none of the tasks while one of
# its tasks was runnable) and cpu.stat force_idle_usec are printed.
# On stock every exclusion check fails, and so does (c)'s core-time check.
. "$(dirname "$0")/lib.sh"
test_init 42-gang-doc
require_cosched
cosched_poll_window 10000000	# the gang floor under TCG (lib.sh)
DURATION=${COSCHED_DURATION:-8}

cg_create G; cg_cpus G "$C1,$C2"; cg_weight G 100
cg_create P; cg_cpus P "$C1,$C2"; cg_weight P 100
tracefs_ready || fail "no sched_switch tracing"
# Schedstats stay as booted (off): the series accounts forced idle in
# cpu.stat without them, and flipping their static key at runtime can kill
# multi-threaded TCG (a guest died so here).
G=$(cg_rel G) P=$(cg_rel P)

# f EXPR VAR=VALUE...: an awk expression over the values, 2 decimals;
# nothing if a value is missing (the check then fails on an empty value).
f() {
	local e=$1 v a=()
	shift
	for v in "$@"; do [[ ${v#*=} =~ ^-?[0-9.]+$ ]] || return 0; a+=(-v "$v"); done
	awk "${a[@]}" "BEGIN { printf \"%.2f\", $e }" 2>/dev/null
}
t() { kv "$1" "$2" "$3" "trace_$4"; }
fi_stat() { echo "G $(cg_stat G core_sched.force_idle_usec) P $(cg_stat P core_sched.force_idle_usec)"; }

log "# --- (a) asymmetric: G = g2 (cpu $C1); P = p2 (cpu $C1) + p3 (cpu $C2)"
if ! cg_sched G 1 && [ "$COSCHED" = 1 ]; then fail "cannot coschedule G"; fi
fi0=$(fi_stat)
corun_run a --trace --task g2:"$C1":"$G":G --task p2:"$C1":"$P":P --task p3:"$C2":"$P":P
log "# cpu.stat force_idle_usec before: $fi0, after: $(fi_stat)"
a_gu=$(t a group G union_us); a_pu=$(t a group P union_us); win=$(kv a run summary window_us)
a_core=$(f "100 * g / (g + p)" g="$a_gu" p="$a_pu")
a_cpu=$(t a group G share_pct)
a_x=$(kv a gpair G,P overlap_pct_of_min)
# CPU 3 forced idle: g2 ran and p3 did not (p3 is always runnable).
a_fi3=$(f "100 * (r - o) / w" r="$(t a task g2 run_us)" o="$(t a pair g2,p3 overlap_us)" w="$win")
a_fi2=$(f "100 * (w - g - p) / w" w="$win" g="$(t a task g2 run_us)" p="$(t a task p2 run_us)")
log "# (a) G holds the core $a_core% of the held time (G $a_gu us, P $a_pu us); CPU-time shares G $a_cpu%, p2 $(t a task p2 share_pct)%, p3 $(t a task p3 share_pct)%"
log "# (a) forced idle: cpu $C2 $a_fi3% of the window (g2 ran, p3 waited), cpu $C1 ran neither g2 nor p2 $a_fi2%; G/P executed at once $a_x% of the shorter"
check_within "(a) asymmetric: G's core time %" "$a_core" 50 10
check_within "(a) asymmetric: G's run-time share %" "$a_cpu" 40 10
check_le "(a) asymmetric: G/P overlap %" "$a_x" 0.1

log "# --- (b) gang g2+g3 against w3 (P, cpu $C2) waking every 1 ms; control: G not coscheduled"
sl="--sleep-us 1000 --burst-us 100"
b_tasks() { echo --task g2:"$C1":"$G":G --task g3:"$C2":"$G":G --sleeper w3:"$C2":"$P":P; }
cg_sched G 0 || [ "$COSCHED" = 0 ] || fail "cannot set G back to 0"
# shellcheck disable=SC2046,SC2086
corun_run b0 --trace $sl $(b_tasks)
if ! cg_sched G 1 && [ "$COSCHED" = 1 ]; then fail "cannot coschedule G"; fi
fi0=$(fi_stat)
# shellcheck disable=SC2046,SC2086
corun_run b --trace $sl $(b_tasks)
log "# cpu.stat force_idle_usec before: $fi0, after: $(fi_stat)"
b_run0=$(t b0 task w3 run_us); b_run=$(t b task w3 run_us)
b_rel=$(f "100 * r / c" r="$b_run" c="$b_run0")
b_co=$(t b group G all_pct_of_union)
b_x=$(max "$(kv b pair g2,w3 overlap_pct_of_min)" "$(kv b pair g3,w3 overlap_pct_of_min)")
b_fi2=$(f "100 * (r - o) / w" r="$(t b task w3 run_us)" o="$(t b pair g2,w3 overlap_us)" w="$(kv b run summary window_us)")
log "# (b) w3: coscheduled $(kv b task w3 wakeups_per_s) wakeups/s, oversleep avg $(kv b task w3 wake_lat_avg_us) us, max $(kv b task w3 wake_lat_max_us) us, > 1 ms $(kv b task w3 wake_lat_1ms); control $(kv b0 task w3 wakeups_per_s)/s, avg $(kv b0 task w3 wake_lat_avg_us) us, max $(kv b0 task w3 wake_lat_max_us) us, > 1 ms $(kv b0 task w3 wake_lat_1ms)"
log "# (b) w3 ran $b_run us coscheduled vs $b_run0 us in the control = $b_rel%; G shares $(t b group G share_pct)% (control $(t b0 group G share_pct)%)"
log "# (b) gang co-run $b_co% (control $(t b0 group G all_pct_of_union)%; sched view $(kv b group G sched_all_pct_of_union)%); cpu $C1 forced idle while w3 ran: $b_fi2% of the window; w3/gang executed at once $b_x% of the shorter"
check_ge "(b) 1 kHz waker: w3 run time, % of control" "$b_rel" 80
# Under TCG the followers' lag (a vCPU thread waits for a host CPU) costs
# the gang 10-12% of co-run at ~500 wakeups/s (sched-cosched.rst, with
# the numbers): the gang floor here is that coscheduling raises co-run
# over the control, by 3.5-5 points measured; stock gains nothing.  One
# pair's gain ranged 0.1-7.8 points over 13 runs (TCG's noise, the
# control alone 75-87%), so two more pairs run, alternated, and the
# median gain is checked.
b_co0=$(t b0 group G all_pct_of_union)
b_gains=("$(f "c - c0" c="$b_co" c0="$b_co0")")
for r in 2 3; do
	cg_sched G 0 || [ "$COSCHED" = 0 ] || fail "cannot set G back to 0"
	# shellcheck disable=SC2046,SC2086
	corun_run "b0r$r" --trace $sl $(b_tasks) > /dev/null
	if ! cg_sched G 1 && [ "$COSCHED" = 1 ]; then fail "cannot coschedule G"; fi
	# shellcheck disable=SC2046,SC2086
	corun_run "br$r" --trace $sl $(b_tasks) > /dev/null
	b_gains+=("$(f "c - c0" c="$(t "br$r" group G all_pct_of_union)" c0="$(t "b0r$r" group G all_pct_of_union)")")
done
b_gain=$(printf '%s\n' "${b_gains[@]}" | grep -E '^-?[0-9.]+$' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 3) print v[2] }')
log "# (b) co-run gain per pair: ${b_gains[*]} points; median $b_gain"
log "# (b) follow windows (apart, trace): coscheduled n $(t b group G apart_n), p50 $(t b group G apart_p50_us) us, p99 $(t b group G apart_p99_us) us, max $(t b group G apart_max_us) us; control n $(t b0 group G apart_n), p50 $(t b0 group G apart_p50_us) us"
check_ge "(b) 1 kHz waker: gang co-run gain over the control, median of 3 pairs, points" "$b_gain" 2
check_le "(b) 1 kHz waker: w3/gang overlap %" "$b_x" 0.1

log "# --- (c) g2 alone on cpu $C1, g3 and p3 (P) on cpu $C2"
fi0=$(fi_stat)
corun_run c --trace --task g2:"$C1":"$G":G --task g3:"$C2":"$G":G --task p3:"$C2":"$P":P
log "# cpu.stat force_idle_usec before: $fi0, after: $(fi_stat)"
c_gu=$(t c group G union_us); c_pu=$(t c group P union_us)
c_p=$(f "100 * p / (g + p)" g="$c_gu" p="$c_pu")
c_co=$(t c group G all_pct_of_union)
c_gs=$(t c group G share_pct)
c_x=$(kv c gpair G,P overlap_pct_of_min)
c_fi2=$(f "100 * (r - o) / w" r="$(t c task p3 run_us)" o="$(t c pair g2,p3 overlap_us)" w="$(kv c run summary window_us)")
log "# (c) P holds the core $c_p% of the held time (G $c_gu us, P $c_pu us); cpu $C2 split g3 $(t c task g3 run_pct_of_window)% / p3 $(t c task p3 run_pct_of_window)% of the window"
log "# (c) gang co-run $c_co%; cpu $C1 forced idle (p3 ran, g2 waited) $c_fi2% of the window; G/P executed at once $c_x% of the shorter"
check_within "(c) gang's sibling: P's core time %" "$c_p" 67 10
check_within "(c) gang's sibling: G's run-time share %" "$c_gs" 50 10
log "# (c) follow windows (apart, trace): n $(t c group G apart_n), p50 $(t c group G apart_p50_us) us, p99 $(t c group G apart_p99_us) us, max $(t c group G apart_max_us) us"
# TCG floor (sched-cosched.rst: 86.5-90.6% measured, the followers' lag
# at every turn); without coscheduling g2 runs alone two thirds of the time.
check_ge "(c) gang's sibling: gang co-run %" "$c_co" 80
check_le "(c) gang's sibling: G/P overlap %" "$c_x" 0.1

finish "(a) G core $(num "$a_core")% (50+-10), run share $(num "$a_cpu")% (40+-10); (b) w3 run $(num "$b_rel")% of control (>=80) at $(kv b task w3 wakeups_per_s)/s, co-run $(num "$b_co")% vs control $(num "$b_co0")%, median gain of 3 pairs $(num "$b_gain") (>=2); (c) P core $(num "$c_p")% (67+-10), G run share $(num "$c_gs")% (50+-10), co-run $(num "$c_co")% (>=80, TCG); overlap $(num "$(max "$a_x" "$b_x" "$c_x")")% (<=0.1)"
