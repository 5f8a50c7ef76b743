#!/bin/sh
# A bounded fuzz run of the config parser: one PASS/FAIL line.
cd "$(dirname "$0")/.." || exit 1
secs=${FUZZ_SECONDS:-10}
corpus=tests/fuzz-corpus.tmp
rm -rf $corpus && mkdir -p $corpus
cp ../etc/coschedd.conf ../etc/coschedd.conf.example tests/fuzz-seeds/* $corpus/ 2>/dev/null
log=$(mktemp /tmp/coschedd-fuzz.XXXXXX)
if ./tests/fuzz-config -help=1 2>&1 | grep -q max_total_time; then
        ./tests/fuzz-config -max_total_time=$secs -seed=1 -max_len=8192 -timeout=5 -rss_limit_mb=1024 \
                -artifact_prefix=/tmp/coschedd-fuzz- $corpus >$log 2>&1
        rc=$?
        runs="libFuzzer+ASan+UBSan, $(grep -o 'Done [0-9]* runs' $log | tail -1), ${secs}s bound"
else
        ./tests/fuzz-config -runs=200000 -seed=1 $corpus/* >$log 2>&1
        rc=$?
        runs="standalone mutation driver+ASan+UBSan, $(grep -o 'Done [0-9]* runs' $log | tail -1)"
fi
if [ $rc -eq 0 ]; then
        echo "PASS fuzz/config ($runs)"
else
        echo "FAIL fuzz/config: exit $rc, $(grep -m1 -E 'ERROR|SUMMARY' $log) (log $log)"
        exit 1
fi
rm -f $log
rm -rf $corpus
