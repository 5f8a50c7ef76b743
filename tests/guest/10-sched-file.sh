#!/bin/bash
# timeout: 60
# cpu.scheduled input handling: 0..max_level accepted and read back; every
# bad value refused with the right errno (exact, from write(2) via schedw)
# and leaving the value as it was (checked at 0 and again at 1); a value
# above the maximum is ERANGE; the root cgroup has no cpu.scheduled; a
# coscheduled group can be removed.
. "$(dirname "$0")/lib.sh"
test_init 10-sched-file
require_cosched

F=$(cg_dir X)/cpu.scheduled
cg_create X

# Root: no file.
if [ -e "$CG/cpu.scheduled" ]; then fail "root cgroup has cpu.scheduled"; else pass "root has no cpu.scheduled"; fi

if [ ! -e "$F" ]; then
	fail "cpu.scheduled missing (stock kernel?)"
	finish "cpu.scheduled missing (stock kernel?): no input to test"
fi
if ! [[ "${MAX_LEVEL:-}" =~ ^[0-9]+$ ]]; then
	fail "max_level unreadable or not a number: '${MAX_LEVEL:-missing}'"
	MAX_LEVEL=1
fi
check_ge "max_level (default boot has cosched_max_level=1)" "$MAX_LEVEL" 1
check_eq "new group reads" "$(cat "$F")" 0

refused=0 kept=0 total=0
# bad VALUE ERRNO[|ERRNO2]: refused with that errno, value unchanged.
bad() {
	local v=$1 want=$2 before after got shown
	shown=$(printf '%q' "$v")
	before=$(cat "$F")
	got=$(schedw "$F" "$v")
	after=$(cat "$F")
	total=$((total + 1))
	if [[ "|$want|" == *"|$got|"* ]]; then
		refused=$((refused + 1))
		pass "write $shown: $got"
	else
		fail "write $shown: got $got, want $want"
	fi
	if [ "$after" = "$before" ]; then
		kept=$((kept + 1))
	else
		fail "write $shown changed the value: $before -> $after"
	fi
}
accepted=0 valid=0
# good VALUE READBACK [-n]
good() {
	local got now
	if [ -n "${3:-}" ]; then got=$(schedw "$3" "$F" "$1"); else got=$(schedw "$F" "$1"); fi
	now=$(cat "$F")
	valid=$((valid + 1))
	if [ "$got" = ok ] && [ "$now" = "$2" ]; then
		accepted=$((accepted + 1))
		pass "write $(printf '%q' "$1")${3:+ (with newline)}: ok, reads back $now"
	else
		fail "write $(printf '%q' "$1")${3:+ (with newline)}: $got, reads back $now (want ok, $2)"
	fi
}

bad_values() {
	bad abc EINVAL
	# A zero-length write writes nothing: cgroup_file_write() returns 0
	# for every cgroup file before the handler sees it.
	bad "" "EINVAL|ok"
	bad "1x" EINVAL
	bad " " EINVAL
	bad $'\n' EINVAL
	bad "1.5" EINVAL
	bad "1 1" EINVAL
	bad "0x" EINVAL
	bad "-1" "EINVAL|ERANGE"
	bad "99999999999999999999" "EINVAL|ERANGE"
	bad "18446744073709551616" "EINVAL|ERANGE"
	bad "18446744073709551615" "ERANGE|EINVAL"
	bad "4294967297" "ERANGE|EINVAL"	# 2^32+1: must not wrap to 1
	bad "$((MAX_LEVEL + 1))" ERANGE
	bad "$((MAX_LEVEL + 100))" ERANGE
}

above=$(schedw "$F" "$((MAX_LEVEL + 1))")
check_eq "max+1 ($((MAX_LEVEL + 1))) refused" "$above" ERANGE
log "# --- bad values at 0"
bad_values
log "# --- valid values"
for ((l = 0; l <= MAX_LEVEL; l++)); do good "$l" "$l"; done
good 0 0
good 1 1 -n
log "# --- bad values at 1"
bad_values
check_eq "still 1 after bad writes" "$(cat "$F")" 1
good 0 0 -n
good 1 1

# A coscheduled group can be removed; its sibling is unaffected.
cg_create Y
schedw "$(cg_dir Y)/cpu.scheduled" 1 > /dev/null
if rmdir "$(cg_dir Y)"; then pass "rmdir of a coscheduled group"; else fail "rmdir of a coscheduled group failed"; fi
check_eq "X still reads" "$(cat "$F")" 1
good 0 0

root=absent
[ -e "$CG/cpu.scheduled" ] && root=present
finish "bad writes: $refused/$total right errno, $kept/$total value unchanged; valid: $accepted/$valid ok; max_level $MAX_LEVEL, max+1: $above; root file $root"
