# guest/guest.mk: the guest kernel and images; included by the top Makefile.
#   make guest    build/guest/{vmlinux,vmlinux-up,bzImage,initramfs.cpio.gz,
#                 rootfs.ext4,agent.ext4}
# The kernel comes from a cache outside the repo (guest/README.md); a changed
# fragment or build script is a new cache key, so make's timestamps and the
# cache agree on when to rebuild.

BUILD ?= build
GUEST_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
GUEST_OUT := $(BUILD)/guest

# What the kernel cache key is made of (the package version is read by the
# script; the tarball's mtime changes with it). wildcard: a missing package
# is reported by the script, not as "no rule to make target".
GUEST_KERNEL_INPUTS := $(GUEST_DIR)/kernel.config $(GUEST_DIR)/build-kernel.sh \
                       $(wildcard $(GUEST_DIR)/kernel-patches/*.patch) \
                       $(wildcard /usr/src/linux-source-6.1.tar.xz)
GUEST_KERNEL_OUTPUTS := $(addprefix $(GUEST_OUT)/,vmlinux bzImage System.map \
                        kernel.config.final gen_init_cpio)
# Inputs of the root tree both images are made from.
# The agent (guest/agent/agent.mk) goes into both images as /sbin/airlock-agent.
export AIRLOCK_AGENT := $(abspath $(GUEST_OUT)/agent)
GUEST_STAGE_INPUTS := $(GUEST_DIR)/stage-root.sh $(GUEST_DIR)/init $(GUEST_OUT)/agent \
                      $(wildcard /bin/busybox)

.PHONY: guest
guest: $(GUEST_OUT)/vmlinux $(GUEST_OUT)/vmlinux-up $(GUEST_OUT)/bzImage \
       $(GUEST_OUT)/initramfs.cpio.gz $(GUEST_OUT)/rootfs.ext4 $(GUEST_OUT)/agent.ext4

$(GUEST_KERNEL_OUTPUTS) &: $(GUEST_KERNEL_INPUTS)
	$(GUEST_DIR)/build-kernel.sh $(GUEST_OUT)

# The same kernel with its one-CPU lock patch made in the file
# (smp_unlock/smp_unlock.h): what airlock boots when a VM has one CPU.
SMP_UNLOCK_SRCS := $(GUEST_DIR)/smp_unlock/main.c $(GUEST_DIR)/smp_unlock/smp_unlock.c
$(BUILD)/tools/smp-unlock: $(SMP_UNLOCK_SRCS) $(GUEST_DIR)/smp_unlock/smp_unlock.h
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $(CFLAGS_COMMON) -o $@ $(SMP_UNLOCK_SRCS) -lelf

$(GUEST_OUT)/vmlinux-up: $(GUEST_OUT)/vmlinux $(BUILD)/tools/smp-unlock
	$(BUILD)/tools/smp-unlock $< $@

$(GUEST_OUT)/initramfs.cpio.gz: $(GUEST_DIR)/build-initramfs.sh $(GUEST_STAGE_INPUTS) \
                                $(GUEST_OUT)/gen_init_cpio
	$(GUEST_DIR)/build-initramfs.sh $@ $(GUEST_OUT)/gen_init_cpio

# The agent alone on a small disk: how imported images boot (airlock image).
$(GUEST_OUT)/agent.ext4: $(GUEST_DIR)/build-agent-disk.sh $(GUEST_OUT)/agent
	$(GUEST_DIR)/build-agent-disk.sh $@ $(GUEST_OUT)/agent

$(GUEST_OUT)/rootfs.ext4: $(GUEST_DIR)/build-rootfs.sh $(GUEST_STAGE_INPUTS)
	$(GUEST_DIR)/build-rootfs.sh $@
