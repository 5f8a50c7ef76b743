#!/bin/bash
# timeout: 600
# (A guard against a hang, not a measure: in full runs the test took
# 194-392 s while each write forked 5-6 times and each concurrent write
# once; alone in its boot on 2026-12-07 it took 127 s once the judged
# writes forked only for schedw, and 82 s once the concurrent writes went
# through schedw -p, 3200 of them in 3 s.)
# Hostile input to cpu.scheduled (issue 12 point 4); 10-sched-file has the
# basic values, this adds:
#  - random writes (random bytes, and random strings of digits, signs,
#    blanks, newlines, letters), each judged against a model of the
#    documented parser (kstrtouint base 10: an optional '+', digits, one
#    optional newline; overflow of 32 bits ERANGE; above max_level ERANGE;
#    else EINVAL; a zero-length write does nothing; over a page E2BIG, as
#    on every cgroup file): the exact errno, and the value after the write
#    must be the model's (unchanged on every error);
#  - bytes after a NUL, blanks, signs, leading zeros, page-sized writes;
#  - a number written in parts (several write(2)s on one fd): each
#    write(2) is parsed on its own, "1" then "5" is 1 then ERANGE, never 15;
#  - 16 concurrent writers of 200 writes each, started together (flat
#    group and nested groups, with tasks in them) and a reader: only
#    documented results, every writer reports every write, values read
#    are always levels;
#  - delegation: cgroup2 mounted with nsdelegate; a subtree chowned to an
#    unprivileged user (directory, cgroup.procs, cgroup.subtree_control,
#    cgroup.threads): the user coschedules groups inside it, cannot write
#    the delegation root's own cpu.scheduled nor any outside (EACCES), can
#    move its tasks only inside it, and from a cgroup namespace rooted in
#    it cannot write its namespace root's cpu.scheduled (EPERM) nor move
#    out of it (ENOENT).
. "$(dirname "$0")/lib.sh"
test_init 81-hostile
require_cosched
export LC_ALL=C		# bytes, not characters
T=$(cg_dir "")
T=${T%/}
[[ ${MAX_LEVEL:-} =~ ^[0-9]+$ ]] || MAX_LEVEL=0
SEED=${HOSTILE_SEED:-$(date +%s)}
RANDOM=$SEED
log "# seed $SEED, max_level $MAX_LEVEL"
cg_create H
F=$T/H/cpu.scheduled
if [ ! -e "$F" ]; then
	fail "cpu.scheduled missing (stock kernel?)"
	finish "cpu.scheduled missing (stock kernel?): no input to test"
fi
# A task inside, so that a level change has tasks to walk.
sleep 1000 & SLEEPER=$!
echo "$SLEEPER" > "$T/H/cgroup.procs"

# The loop below forks only for schedw: under TCG a fork costs tens of
# milliseconds, and a write judged through cat, a $(model) subshell and
# a printf | cut pipeline took 5-6 of them (368 s for this test on a slow
# host on 2026-12-07, most of it here).
# current: the file's value, read without a fork, into $cur.
current() { cur=; read -r cur < "$F" || true; }
# model STRING CURRENT: "RESULT VALUE-AFTER" per the documented parser,
# into $m.
NUMRE=$'^\\+?([0-9]+)\n?$'
model() {
	local s=$1 cur=$2 v
	if [ ${#s} -eq 0 ]; then m="ok|EINVAL $cur"; return; fi
	if [ ${#s} -gt 4096 ]; then m="E2BIG $cur"; return; fi
	if [[ $s =~ $NUMRE ]]; then
		v=${BASH_REMATCH[1]}
		v=${v#"${v%%[!0]*}"}; v=${v:-0}
		if [ ${#v} -gt 10 ] || { [ ${#v} -eq 10 ] && [[ $v > 4294967295 ]]; }; then
			m="ERANGE $cur"
		elif [ "$v" -gt "$MAX_LEVEL" ]; then
			m="ERANGE $cur"
		else
			m="ok $v"
		fi
	else
		m="EINVAL $cur"
	fi
}
total=0 right=0
declare -A seen=()
# judge SHOWN GOT EXPECTED-RESULT EXPECTED-VALUE
judge() {
	local cur
	current
	total=$((total + 1))
	seen[$2]=$((${seen[$2]:-0} + 1))
	if [[ $2 =~ ^($3)$ ]] && [ "$cur" = "$4" ]; then
		right=$((right + 1))
	else
		fail "write $1: $2, reads $cur (model: $3, $4)"
	fi
}
# try [-e] VALUE: one write, judged.  With -e, VALUE has C escapes.
try() {
	local esc= raw=$1 s cur m got shown
	current
	if [ "$1" = -e ]; then
		# The kernel's copy of the bytes ends at the first NUL.
		esc=-e raw=$2
		printf -v s '%b' "${raw%%\\x00*}x"; s=${s%x}
		model "$s" "$cur"
		[ -n "$s" ] || m="EINVAL $cur"
	else
		s=$1
		model "$s" "$cur"
	fi
	got=$(schedw $esc "$F" "$raw")
	printf -v shown '%q' "$raw"
	judge "${shown:0:60}" "$got" "${m% *}" "${m##* }"
}

log "# --- chosen values"
for v in +1 +0 01 0001 00000000000000000001 " 1" "1 " $'\t1' $'1\t' $'1\n\n' $'\n1' -0 +-1 ++1 0x1 1e0 1.0 \
	 $'\xd9\xa1' 4294967295 4294967296 04294967296 42949672950 "+$((MAX_LEVEL + 1))" "$((MAX_LEVEL + 1))"$'\n'; do
	try "$v"
done
# NUL bytes: the kernel's copy ends at the first NUL (every kernfs file).
for v in '1\x00' '1\x00garbage' '\x001' '0\x00\x00'; do try -e "$v"; done
# Page-sized writes: up to 4096 bytes parsed, more E2BIG.
try "$(printf '%04095d' 1)"
try "$(printf '%04096d' 1)"
try "$(printf '%04097d' 1)"
try "$(printf '1%.0s' $(seq 4096))"
before=$right/$total
log "# chosen: $before as the model says"

log "# --- random writes"
ALPHA=("0" "1" "1" "2" "9" "+" "-" " " $'\n' $'\t' "x" "." "0" "$MAX_LEVEL")
for ((i = 0; i < 300; i++)); do
	if ((i % 3 == 0)); then
		s=$(head -c $((RANDOM % 24 + 1)) /dev/urandom | tr -d '\0')
	else
		s=
		for ((k = RANDOM % 12; k > 0; k--)); do s+=${ALPHA[RANDOM % ${#ALPHA[@]}]}; done
	fi
	try "$s"
	# Now and then a valid level, so that errors are seen at every level.
	((i % 10 == 0)) && try "$((RANDOM % (MAX_LEVEL + 1)))"
done
log "# results seen: $(for k in "${!seen[@]}"; do printf '%s=%s ' "$k" "${seen[$k]}"; done)"
check_eq "writes as the model says (exact errno, value after)" "$right/$total" "$total/$total"

log "# --- a number in parts: one fd, one write(2) each"
# parts CURRENT-BEFORE WANT-RESULTS WANT-VALUE VALUES...
parts() {
	local set=$1 want=$2 wantv=$3 got
	shift 3
	schedw "$F" "$set" > /dev/null
	got=$(schedw -s "$F" "$@" | tr '\n' ' ')
	check_eq "$(printf '%q ' "$@")after $set: results" "${got% }" "$want"
	check_eq "$(printf '%q ' "$@")after $set: value" "$(cat "$F")" "$wantv"
}
parts 0 "ok ok" 0 1 0
parts 0 "ok ERANGE" 1 1 5
parts 0 "ok EINVAL" 1 1 $'\n'
parts 1 "ok EINVAL" 0 0 +
parts 0 "EINVAL ok" 1 + 1
parts 0 "ok ERANGE ERANGE" 1 1 2"$MAX_LEVEL" 4294967296

log "# --- concurrent writers and readers"
cg_create CW; cg_create n1 CW; cg_create n2 CW/n1; cg_create side CW/n1
sleep 1000 & S2=$!; echo "$S2" > "$T/CW/n1/n2/cgroup.procs"
sleep 1000 & S3=$!; echo "$S3" > "$T/CW/n1/side/cgroup.procs"
NEST=ok
[ "$MAX_LEVEL" -gt 1 ] && NEST="ok|EINVAL|EBUSY"
mkdir "$WORK/cw"
nap_fd
WRITES=200	# per writer
# Each writer draws its writes, then waits for the others and does them
# all with one schedw -p (one open and write(2) per write): the 16 bursts
# overlap, and a write costs no fork.
writer() { # ID GROUP...
	local id=$1 n bad=0 g v r want i=0 args=() wants=() shown=()
	shift
	RANDOM=$((SEED + id))
	for ((n = 0; n < WRITES; n++)); do
		g=$1; [ $# -gt 1 ] && ((RANDOM % 2)) && g=$2
		case $((RANDOM % 4)) in
		0) v=abc; want=EINVAL ;;
		1) v=$((MAX_LEVEL + 1 + RANDOM % 3)); want=ERANGE ;;
		*) v=$((RANDOM % (MAX_LEVEL + 1))); want=$NEST ;;
		esac
		args+=("$T/$g/cpu.scheduled" "$v") wants+=("$want") shown+=("$g '$v'")
	done
	: > "$WORK/cw/ready$id"
	until [ -e "$WORK/cw/go" ]; do read -r -t 0.01 -u 7; done
	while read -r r; do
		[[ $r =~ ^(${wants[i]})$ ]] || { bad=$((bad + 1)); echo "writer $id: ${shown[i]}: $r (want ${wants[i]})" >> "$WORK/cw/unexpected"; }
		i=$((i + 1))
	done < <(schedw -p "${args[@]}")
	echo "$i $bad" > "$WORK/cw/w$id"
}
reader() { # ID
	local n=0 bad=0 g v
	while [ ! -e "$WORK/cw/stop" ]; do
		for g in CW CW/n1 CW/n1/n2; do
			v=; read -r v < "$T/$g/cpu.scheduled"
			[[ $v =~ ^[0-9]+$ ]] && [ "$v" -le "$MAX_LEVEL" ] || { bad=$((bad + 1)); echo "reader: $g reads '$v'" >> "$WORK/cw/unexpected"; }
			n=$((n + 1))
		done
	done
	echo "$n $bad" > "$WORK/cw/r$1"
}
pids=()
for ((i = 0; i < 8; i++)); do writer $i CW & pids+=($!); done
for ((i = 8; i < 16; i++)); do writer $i CW/n1 CW/n1/n2 & pids+=($!); done
wait_until 60 '[ "$(ls "$WORK"/cw/ready* 2>/dev/null | wc -l)" = 16 ]' || fail "writers not ready after 60 s"
reader 0 & rpid=$!
t0=$SECONDS
touch "$WORK/cw/go"
wait "${pids[@]}"
touch "$WORK/cw/stop"; wait $rpid
secs=$((SECONDS - t0))
nw=$(ls "$WORK"/cw/w* 2>/dev/null | wc -l)
check_eq "concurrent writers that reported" "$nw" 16
check_eq "concurrent writes" "$(cat "$WORK"/cw/w* | awk '{ s += $1 } END { print s + 0 }')" $((16 * WRITES))
check_eq "reader reported" "$(ls "$WORK"/cw/r0 2>/dev/null | wc -l)" 1
check_gt "reads during the writes" "$(awk '{ print $1 }' "$WORK/cw/r0" 2>/dev/null)" 0
if [ -s "$WORK/cw/unexpected" ]; then
	fail "$(wc -l < "$WORK/cw/unexpected") undocumented results under concurrency"
	sort "$WORK/cw/unexpected" | uniq -c | head -10 | sed 's/^/#   /'
else
	pass "$((16 * WRITES)) concurrent writes in $secs s: only documented results; values read always levels"
fi
# Consistent afterwards: every group goes to 0 and back, tasks still there.
for g in CW/n1/n2 CW/n1 CW; do check_eq "$g to 0 after the storm" "$(schedw "$T/$g/cpu.scheduled" 0)" ok; done
for g in CW CW/n1 CW/n1/n2; do check_eq "$g to 1 after the storm" "$(schedw "$T/$g/cpu.scheduled" 1)" ok; done
for g in CW/n1/n2 CW/n1 CW; do schedw "$T/$g/cpu.scheduled" 0 > /dev/null; done
check_eq "tasks still in place" "$(cat "$T/CW/n1/n2/cgroup.procs")" "$S2"
kill "$SLEEPER" "$S2" "$S3" 2>/dev/null

log "# --- delegation"
opts=$(findmnt -no OPTIONS "$CG")
log "# $CG mount options: $opts"
if [[ ,$opts, != *,nsdelegate,* ]]; then
	mount -o remount,nsdelegate "$CG" || fail "cannot remount $CG with nsdelegate"
	opts=$(findmnt -no OPTIONS "$CG")
	log "# remounted: $opts"
fi
[[ ,$opts, == *,nsdelegate,* ]] && pass "cgroup2 mounted with nsdelegate" || fail "no nsdelegate: $opts"
U=cosdeleg
id "$U" > /dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$U" 2>/dev/null || U=nobody
uid=$(id -u "$U"); gid=$(id -g "$U")
log "# delegatee: $U ($uid:$gid)"
asuser() { setpriv --reuid="$uid" --regid="$gid" --clear-groups -- "$@"; }
cg_create D; cg_create P
D=$T/D
chown "$uid:$gid" "$D" "$D/cgroup.procs" "$D/cgroup.subtree_control" "$D/cgroup.threads"
ls -ld "$D" "$D/cgroup.procs" "$D/cpu.scheduled" | sed 's/^/# /'
asuser mkdir "$D/c" "$D/c2" && pass "user creates groups in the delegated subtree" || fail "user mkdir in $D"
check_eq "owner of the new group's cpu.scheduled" "$(stat -c %u "$D/c/cpu.scheduled" 2>/dev/null)" "$uid"
check_eq "user: D/c/cgroup.subtree_control +cpu" "$(asuser schedw "$D/c/cgroup.subtree_control" +cpu)" ok
asuser mkdir "$D/c/sub" || fail "user mkdir $D/c/sub"
check_eq "user: D/c cpu.scheduled 1" "$(asuser schedw "$D/c/cpu.scheduled" 1)" ok
check_eq "D/c reads" "$(cat "$D/c/cpu.scheduled")" 1
check_eq "user: D/c cpu.scheduled abc" "$(asuser schedw "$D/c/cpu.scheduled" abc)" EINVAL
check_eq "user: D/c cpu.scheduled max+1" "$(asuser schedw "$D/c/cpu.scheduled" $((MAX_LEVEL + 1)))" ERANGE
check_eq "D/c still reads" "$(cat "$D/c/cpu.scheduled")" 1
check_eq "user: D/c/sub cpu.scheduled 1 (nested gang)" "$(asuser schedw "$D/c/sub/cpu.scheduled" 1)" ok
check_eq "user: delegation root D's own cpu.scheduled" "$(asuser schedw "$D/cpu.scheduled" 1)" EACCES
check_eq "D reads" "$(cat "$D/cpu.scheduled")" 0
check_eq "user: outside (P) cpu.scheduled" "$(asuser schedw "$T/P/cpu.scheduled" 1)" EACCES
check_eq "user: parent of D cpu.scheduled" "$(asuser schedw "$T/cpu.scheduled" 1)" EACCES
# The user's task, started in D/c by root (a delegatee cannot pull tasks
# in from outside: it needs the common ancestor's cgroup.procs).
# (A group with tasks and the cpu controller on for its children is a
# thread root: no task may then join its children; so the task starts in
# D/c2 and moves into D/c/sub.)
out=$(sh -c 'echo $$ > "$1/c2/cgroup.procs" && exec setpriv --reuid="$2" --regid="$3" --clear-groups -- sh -c "
	echo move-in \$(schedw \"$1/c/sub/cgroup.procs\" \$\$)
	echo move-out \$(schedw \"$4/P/cgroup.procs\" \$\$)
	echo now \$(cat /proc/self/cgroup)"' _ "$D" "$uid" "$gid" "$T" 2>&1)
log "$out" | sed 's/^/# user task: /'
check_eq "user task moves itself within D, into a coscheduled group" "$(sed -n 's/^move-in //p' <<< "$out")" ok
check_eq "user task moves itself out of D" "$(sed -n 's/^move-out //p' <<< "$out")" EACCES
# nsdelegate: a cgroup namespace rooted at D/c is a delegation boundary.
out=$(sh -c 'echo $$ > "$1/c/cgroup.procs" && exec unshare -C setpriv --reuid="$2" --regid="$3" --clear-groups -- sh -c "
	echo nsroot \$(schedw \"$1/c/cpu.scheduled\" 0)
	echo inside \$(schedw \"$1/c/sub/cpu.scheduled\" 0)
	echo escape \$(schedw \"$1/c2/cgroup.procs\" \$\$)
	echo cgroup \$(cat /proc/self/cgroup)"' _ "$D" "$uid" "$gid" 2>&1)
log "$out" | sed 's/^/# user in cgroupns: /'
check_eq "cgroupns: namespace root's cpu.scheduled" "$(sed -n 's/^nsroot //p' <<< "$out")" EPERM
check_eq "cgroupns: group below the namespace root" "$(sed -n 's/^inside //p' <<< "$out")" ok
check_eq "cgroupns: move out of the namespace" "$(sed -n 's/^escape //p' <<< "$out")" ENOENT
check_eq "D/c after the namespace writes" "$(cat "$D/c/cpu.scheduled") $(cat "$D/c/sub/cpu.scheduled")" "1 0"

finish "hostile writes $right/$total as documented (seed $SEED), parts ok, $((16 * WRITES)) concurrent writes documented, delegation: inside ok, root/outside EACCES, nsroot EPERM"
