# airlock — see README.md.  `make` builds the monitor, the probe guests and
# the guest kernel + images; `make test` runs every test; `make bench` prints
# the benchmark figures.  Both install missing Debian packages first.

# Packages before anything else: make reads every makefile (flags such as
# pkg-config's, wildcards over installed files) before it builds, so on a
# machine without the packages that first reading is wrong.  This included
# file is remade by installing what is missing (scripts/install-deps), and
# GNU make then starts over, reading the makefiles again on an installed
# system.  It is remade when a package list changes or dpkg installs or
# removes anything.  `make clean` needs no packages.
BUILD    ?= build
# The stamp's rule below comes first in this file; a bare `make` still
# means `make all`.
.DEFAULT_GOAL := all
PACKAGES_STAMP := $(BUILD)/packages.mk
ifneq ($(filter-out clean,$(or $(MAKECMDGOALS),all)),)
include $(PACKAGES_STAMP)
endif
$(PACKAGES_STAMP): scripts/install-deps $(wildcard scripts/packages/*.list /var/lib/dpkg/status)
	scripts/install-deps
	@mkdir -p $(@D)
	@echo '# scripts/install-deps found every package of scripts/packages/' >$@

CC       ?= gcc
OPT      ?= -O2 -g
CFLAGS_COMMON := -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -I. -MMD -MP
CFLAGS   += $(OPT) $(CFLAGS_COMMON)
# libarchive: tar in and out of sandboxes (vmm/sandbox/tar_in.c, archive_get.c,
# airlock cp).  Debian's libarchive.pc names -lxml2 for a static link but not
# what libxml2 needs itself (ICU), so both packages are asked.
ARCHIVE_LIBS := $(shell pkg-config --static --libs libarchive libxml-2.0 2>/dev/null) -lstdc++
LDLIBS   += -lpthread -lseccomp -lcap -lfdt -ljansson -lssl -lcrypto $(ARCHIVE_LIBS) -lz
# The monitor links statically: a dynamic one pulls ~2.2 MiB of shared
# library pages into every VM process's RSS (fault-around maps whole 64 KiB
# runs of libc.so's text); static, only the code it uses is there (measured
# with the probe guest: overhead 2396 -> 1416 KiB).  Static glibc still
# resolves names through its built-in "files" and "dns" NSS modules, which
# is what the egress broker needs.  `make MONITOR_LDFLAGS=` links it dynamic.
# --gc-sections: libarchive's table of every writer format (which the tar
# writer's object refers to) pulls in its xar writer, hence libxml2 and
# ICU with 30 MiB of data; no code path reaches them, and the linker drops
# them (the binary stays about 3 MiB instead of 35).
MONITOR_LDFLAGS ?= -static -Wl,--gc-sections
SANITIZE := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

# Everything except main() goes into a library the unit tests link too.
# Every folder of the monitor, lowest layer first (each folder's README.md
# says what it may include; scripts/check-layers enforces it).
MONITOR_DIRS := vmm/util vmm/http vmm/memory boot devices devices/virtio vmm/audit vmm/jail vmm/kvm vmm/forward \
                vmm/agent_client vmm/egress vmm/snapshot vmm/image vmm/volume vmm/report vmm/sandbox vmm/e2b vmm/runtime vmm/cli
LIB_SRCS := $(sort $(foreach d,$(MONITOR_DIRS),$(wildcard $(d)/*.c)))
LIB_SRCS := $(filter-out vmm/cli/main.c,$(LIB_SRCS))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
SAN_OBJS := $(LIB_SRCS:%.c=$(BUILD)/san/%.o)

.PHONY: all deps monitor boot run test bench clean install

# `make install` (PREFIX, DESTDIR as usual): airlock in bin/, the guest
# kernel and images in lib/airlock/ (where an installed airlock looks when
# there is no guest/ beside it), the systemd unit for airlock serve, and
# the docs.  The build tree's airlock keeps using build/guest/.
PREFIX ?= /usr/local
BINDIR  = $(PREFIX)/bin
LIBDIR  = $(PREFIX)/lib/airlock
UNITDIR = $(PREFIX)/lib/systemd/system
DOCDIR  = $(PREFIX)/share/doc/airlock

all: monitor probe guest agent

deps:
	scripts/install-deps

monitor: $(BUILD)/airlock $(BUILD)/airlock-runtime

# The OCI runtime is the same binary under another name (vmm/runtime/).
$(BUILD)/airlock-runtime: $(BUILD)/airlock
	ln -sf airlock $@

$(BUILD)/airlock: $(LIB_OBJS) $(BUILD)/obj/vmm/cli/main.o
	$(CC) $(CFLAGS) $(MONITOR_LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/san/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $(CFLAGS_COMMON) $(SANITIZE) -c -o $@ $<

include tests/tests.mk
include vmm/report/surface.mk
-include guest/guest.mk
include guest/agent/agent.mk
-include guest/python-image.mk

# The main job: boot the stripped guest and show its console (through the
# nested lab where /dev/kvm is kvm-pvm; directly on a hardware-KVM host).
BOOT_CMDLINE ?= console=ttyS0 reboot=k panic=-1
boot: all
	tests/lab/run $(BUILD)/airlock boot --kernel $(BUILD)/guest/vmlinux \
	    --initrd $(BUILD)/guest/initramfs.cpio.gz --cpus 2 --cmdline "$(BOOT_CMDLINE)"

# README's main command: a real command in a fresh microVM (through the lab
# on kvm-pvm hosts).  RUN_CMD overrides the example.
RUN_CMD ?= python3 -c 'import platform, os; print("hello from", platform.python_version(), "in a", os.uname().release, "microVM as uid", os.getuid())'
run: all
	tests/lab/run $(BUILD)/airlock run -- $(RUN_CMD)

# Unit, probe and bad-input tests on this host, Linux boots in the lab.
test: all fuzzers agent-client $(BUILD)/bench/marktime
	@tests/boot/mcp-sdk-fetch >/dev/null || echo "(linux-mcp will skip the MCP TypeScript SDK client)"
	@tests/boot/e2b-sdk-fetch >/dev/null || echo "(linux-e2b will skip: no E2B JS SDK)"
	@tests/boot/e2b-suite-fetch >/dev/null || echo "(linux-e2b-sdk will skip: no E2B JS SDK suite)"
	@tests/runtime/cri-fetch >/dev/null || echo "(cri will skip: no gRPC client for the CRI)"
	tests/run-all

# Figures, never assertions: monitor overhead on this host, Linux boot in
# the lab, each side by side with QEMU microvm.
bench: all $(BUILD)/bench/marktime $(BUILD)/bench/pipemeter
	tests/bench/probe-boot
	tests/bench/mount
	tests/lab/run tests/bench/lab-boot
	tests/lab/run tests/bench/lab-disk
	tests/lab/run tests/bench/lab-run
	LAB_ICOUNT=0 tests/lab/run tests/bench/lab-kernel-boot
	tests/lab/run tests/bench/lab-shared-memory
	tests/lab/run tests/bench/lab-vsock
	tests/lab/run tests/bench/lab-forward
	tests/lab/run tests/bench/lab-sandbox
	tests/lab/run tests/bench/lab-credentials
	tests/lab/run tests/bench/lab-image
	tests/lab/run tests/bench/lab-containers
	@if [ -r "$$AIRLOCK_CRI_PROTO" ] && tests/runtime/cri-fetch >/dev/null; then tests/lab/run tests/bench/lab-cri; \
	else echo "(lab-cri skipped: AIRLOCK_CRI_PROTO names no file, or no gRPC client)"; fi
	@tests/boot/e2b-sdk-fetch >/dev/null && tests/lab/run tests/bench/lab-e2b || echo "(lab-e2b skipped: no E2B JS SDK)"

install: all
	install -D -m 0755 $(BUILD)/airlock $(DESTDIR)$(BINDIR)/airlock
	ln -sf airlock $(DESTDIR)$(BINDIR)/airlock-runtime
	install -D -m 0644 $(BUILD)/guest/vmlinux $(DESTDIR)$(LIBDIR)/vmlinux
	install -D -m 0644 $(BUILD)/guest/vmlinux-up $(DESTDIR)$(LIBDIR)/vmlinux-up
	install -D -m 0644 $(BUILD)/guest/rootfs.ext4 $(DESTDIR)$(LIBDIR)/rootfs.ext4
	install -D -m 0644 $(BUILD)/guest/python.ext4 $(DESTDIR)$(LIBDIR)/python.ext4
	install -D -m 0644 $(BUILD)/guest/agent.ext4 $(DESTDIR)$(LIBDIR)/agent.ext4
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(DOCDIR)
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g' guest/airlock.service.in \
	    >$(DESTDIR)$(UNITDIR)/airlock.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/airlock.service
	install -m 0644 README.md docs/*.md $(DESTDIR)$(DOCDIR)/

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJS:.o=.d) $(SAN_OBJS:.o=.d) $(BUILD)/obj/vmm/cli/main.d
