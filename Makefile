# cosched: top-level entry points.  Everything heavy (kernel trees, builds,
# the rootfs, test results) lives in $(COSCHED_CACHE), outside the checkout.
#
#   make demo     boot the patched kernel, show coscheduling, power off
#   make test     host unit tests + guest tests in QEMU ("N passed, N failed")
#   make run      boot the patched kernel to a root login on this terminal
#   make bench    stock vs patched, coscheduled vs not: rates and ratios
#   make peer-baseline   re-measure the peer suites' stock and =n baseline
#   make soak     the stress (levels 0-1 and 0-3) and hostile-input tests on
#                 a KASAN kernel, SOAK s
#
# KERNEL=stock runs demo/test/run on the unpatched kernel (same config).

COSCHED_CACHE ?= $(HOME)/.cache/cosched
KERNEL ?= patched
export COSCHED_CACHE KERNEL

.PHONY: all deps kernel kernel-patched kernel-stock image run demo test bench peer-baseline soak \
	check-host check-series daemon clean distclean help

all: kernel image

help:
	@sed -n 's/^#   //p' Makefile

deps:
	@scripts/deps.sh

kernel: kernel-patched kernel-stock

kernel-patched kernel-stock: deps
	@kernel/build.sh $(@:kernel-%=%)

daemon: deps
	$(MAKE) -C daemon

image: deps
	@image/build.sh

run: deps
	@kernel/build.sh $(KERNEL) && image/build.sh && \
		scripts/boot-guest.sh shell $(KERNEL) $(COSCHED_CACHE)/results/run

demo: deps
	@kernel/build.sh $(KERNEL) && image/build.sh && \
		scripts/boot-guest.sh demo $(KERNEL) $(COSCHED_CACHE)/results/demo

test:
	@tests/run.sh

# Benchmarks: stock vs patched kernel, coscheduled vs not, ratios side by side.
bench:
	@tests/bench.sh

# The kernel's selftests on the stock and the CONFIG_COSCHEDULING=n kernels
# (built here, never by make test): writes tests/peer-baseline/, which the
# peer-suite guest tests compare against.  About 25 minutes of boots.
peer-baseline: deps
	@tests/peer-baseline.sh

check-host:
	@GUEST=0 tests/run.sh

# The debug-kernel soak with KASAN (kernel/build.sh kasan: a full build of
# its own the first time, 34 minutes here, so make test does not
# build it): 80-stress and 82-stress-levels (the same stress booted with
# cosched_max_level=3) for SOAK seconds each (default 600), and 81-hostile.
SOAK ?= 600
soak: deps
	@KERNEL=kasan TESTS="80-stress 81-hostile 82-stress-levels" SOAK=$(SOAK) tests/run.sh

# checkpatch.pl and a compile of the touched directories at every patch,
# with CONFIG_COSCHEDULING=y and =n (several minutes).
check-series: kernel-patched
	@kernel/check-series.sh

clean:
	-$(MAKE) -C daemon clean
	-$(MAKE) -C tests/tools clean

distclean: clean
	rm -rf $(COSCHED_CACHE)
