#!/bin/bash
# timeout: 900
# Not a test: make peer-baseline (tests/peer-baseline.sh) boots the stock
# and the CONFIG_COSCHEDULING=n kernels with cosched.tests=peer-measure
# (core scheduling held on from boot by corehold, as in 70-72) and collects peer-results.txt (peer-suites.sh's result
# lines) and peer-kernel.txt from the results folder.
R=${COSCHED_RESULTS:?}
{
	echo "release $(uname -r)"
	echo "version $(uname -v)"
	echo "cmdline $(cat /proc/cmdline)"
	echo "max_level $(cat /sys/kernel/cosched/max_level 2>/dev/null || echo none)"
	echo "corehold ${COSCHED_COREHOLD:-unknown}"
	echo "coscheduling $(zcat /proc/config.gz 2>/dev/null | grep -E '^(# )?CONFIG_COSCHEDULING[= ]' || echo 'no such option')"
} > "$R/peer-kernel.txt"
cat "$R/peer-kernel.txt"
"$(dirname "$0")/peer-suites.sh" "$R/peer-results.txt"
echo "--- result lines"
cat "$R/peer-results.txt" "$R/peer-results.txt.seconds"
echo "peer suites: $(wc -l < "$R/peer-results.txt") result lines"
