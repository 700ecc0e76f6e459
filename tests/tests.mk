# Test and benchmark targets (included from the top-level Makefile).

PROBE_CFLAGS := -ffreestanding -fno-pic -fno-pie -fno-stack-protector -mno-red-zone \
                -mgeneral-regs-only -fno-asynchronous-unwind-tables -O2 -Wall -Wextra -Werror
PROBE_LDFLAGS := -nostdlib -static -no-pie -Wl,-T,tests/probe/probe.ld -Wl,--build-id=none \
                 -Wl,-z,noexecstack -Wl,--no-warn-rwx-segments
PROBES := $(BUILD)/probe/probe64.elf $(BUILD)/probe/probe-pvh.elf
PROBE_SRCS := tests/probe/probe.c tests/probe/probe_virtio.c tests/probe/probe_attack.c \
	tests/probe/probe_vq.c tests/probe/probe_vsock.c
PROBE_DEPS := $(PROBE_SRCS) tests/probe/probe.h tests/probe/probe_attack.h tests/probe/probe.ld

# Host-side tools the probe tests use on a running monitor.
PROBE_TOOLS := $(BUILD)/probe/inject-syscall

.PHONY: probe
probe: $(PROBES) $(PROBE_TOOLS)

$(BUILD)/probe/inject-syscall: tests/probe/inject_syscall.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $<

$(BUILD)/probe/probe64.elf: tests/probe/entry64.S $(PROBE_DEPS)
	@mkdir -p $(dir $@)
	$(CC) -m64 $(PROBE_CFLAGS) $(PROBE_LDFLAGS) -o $@ tests/probe/entry64.S $(PROBE_SRCS)

# PVH enters in 32-bit mode, so this probe is 32-bit code; Linux ships such
# code inside an ELF64 vmlinux, and so do we (objcopy re-wraps it).
$(BUILD)/probe/probe-pvh.elf: tests/probe/entry_pvh.S $(PROBE_DEPS)
	@mkdir -p $(dir $@)
	$(CC) -m32 $(PROBE_CFLAGS) $(PROBE_LDFLAGS) -o $@.32 tests/probe/entry_pvh.S $(PROBE_SRCS)
	objcopy -O elf64-x86-64 $@.32 $@

include tests/unit/unit.mk

$(BUILD)/bench/%: tests/bench/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $<

# Fuzz targets (libFuzzer via clang): each is tests/fuzz/NAME.c plus the
# sources it exercises.  `make fuzzers` builds them; `make fuzz` runs each
# for FUZZ_SECONDS (default 60); `make test` runs a 20 s pass of each.
FUZZ_CC := clang
FUZZ_FLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE -I. -fsanitize=fuzzer,address,undefined \
              -fno-sanitize-recover=all
FUZZ_SRCS_fuzz_kernel := $(wildcard boot/*.c) vmm/memory/gmem.c
FUZZ_SRCS_fuzz_serial := devices/serial.c
FUZZ_SRCS_fuzz_virtio := devices/virtio/mmio.c devices/virtio/queue.c vmm/memory/gmem.c
FUZZ_SRCS_fuzz_blk    := devices/virtio/blk.c devices/virtio/mmio.c devices/virtio/queue.c \
                         devices/disk.c devices/disk_cow.c devices/disk_io.c vmm/memory/gmem.c
FUZZ_SRCS_fuzz_vsock  := devices/virtio/vsock.c devices/virtio/vsock_hdr.c devices/virtio/vsock_rx.c devices/virtio/vsock_conn.c \
                         devices/virtio/mmio.c devices/virtio/queue.c vmm/memory/gmem.c
FUZZ_SRCS_fuzz_agent_proto := vmm/agent_client/agent_client.c vmm/agent_client/agent_reader.c vmm/agent_client/agent_dir_codec.c vmm/agent_client/agent_cred_codec.c vmm/agent_client/agent_mount_codec.c vmm/agent_client/agent_exec_proc.c vmm/agent_client/agent_ctr_codec.c vmm/agent_client/agent_linux_codec.c vmm/agent_client/agent_conn.c vmm/agent_client/agent_exec.c vmm/agent_client/agent_client_io.c vmm/agent_client/agent_dir.c \
                              vmm/agent_client/agent_watch_codec.c vmm/agent_client/agent_watch.c
FUZZ_SRCS_fuzz_http_request := vmm/http/http_request.c vmm/http/http_head.c
FUZZ_SRCS_fuzz_api_request := vmm/http/http_request.c vmm/http/http_head.c vmm/http/http_query.c
FUZZ_SRCS_fuzz_http_response := vmm/http/http_response.c vmm/http/http_chunked.c vmm/http/http_head.c
FUZZ_SRCS_fuzz_multipart := vmm/http/multipart.c
FUZZ_SRCS_fuzz_scrub := vmm/util/scrub.c tests/unit/scrub_ref.c
FUZZ_SRCS_fuzz_credential_request := vmm/egress/credential_request.c vmm/egress/secret.c vmm/egress/egress_policy.c \
                                     vmm/http/http_request.c vmm/http/http_head.c vmm/util/parse.c
FUZZ_SRCS_fuzz_tar_in := vmm/sandbox/tar_in.c vmm/util/printable.c vmm/util/tar_name.c
FUZZ_SRCS_fuzz_layer_apply := vmm/image/layer_apply.c vmm/image/image_stop.c vmm/util/open_resolve.c vmm/util/printable.c vmm/util/tar_name.c vmm/util/rmtree.c
FUZZ_LIBS_fuzz_layer_apply := $(shell pkg-config --libs libarchive 2>/dev/null)
FUZZ_LIBS_fuzz_tar_in := $(shell pkg-config --libs libarchive 2>/dev/null)
FUZZ_SRCS_fuzz_copy_tree := vmm/cli/run_copy_tree.c vmm/sandbox/tar_in.c vmm/agent_client/agent_client.c \
                            vmm/agent_client/agent_dir_codec.c vmm/agent_client/agent_cred_codec.c \
                            vmm/agent_client/agent_mount_codec.c vmm/agent_client/agent_exec_proc.c vmm/agent_client/agent_ctr_codec.c vmm/agent_client/agent_linux_codec.c \
                            vmm/agent_client/agent_reader.c vmm/agent_client/agent_watch_codec.c \
                            vmm/util/open_resolve.c vmm/util/printable.c vmm/util/tar_name.c vmm/util/rmtree.c
FUZZ_LIBS_fuzz_copy_tree := $(shell pkg-config --libs libarchive 2>/dev/null)
FUZZ_SRCS_fuzz_oci_config := vmm/runtime/oci_config.c vmm/runtime/oci_json.c vmm/runtime/oci_linux.c vmm/runtime/container_linux.c vmm/runtime/pod_role.c \
                             vmm/runtime/container_state.c vmm/util/parse.c vmm/util/rmtree.c \
                             vmm/util/proc_start.c vmm/agent_client/agent_ctr_codec.c vmm/agent_client/agent_linux_codec.c \
                             vmm/agent_client/agent_mount_codec.c vmm/agent_client/agent_dir_codec.c
# The agent's own forward service (guest/agent/forward.c) with the relay's
# functions stubbed in the target, the hello's codec and the -p syntax.
FUZZ_SRCS_fuzz_forward := guest/agent/forward.c vmm/agent_client/forward_hello.c vmm/forward/forward_spec.c
FUZZ_LIBS_fuzz_oci_config := -ljansson -lcap
FUZZ_SRCS_fuzz_e2b_wire := vmm/e2b/connect_wire.c vmm/e2b/proto_json.c vmm/e2b/e2b_passwd.c vmm/util/base64.c
FUZZ_LIBS_fuzz_e2b_wire := -ljansson -lcrypto
SNAP_FILE_SRCS := vmm/snapshot/snapshot_file.c vmm/snapshot/snapshot_fields.c
FUZZ_SRCS_fuzz_snapshot := $(SNAP_FILE_SRCS)
FUZZ_LIBS_fuzz_snapshot := -lfdt
FUZZ_SRCS_fuzz_disk_control := vmm/snapshot/disk_control.c vmm/snapshot/snapshot_control.c vmm/jail/fdpass.c
FUZZ_NAMES := fuzz_kernel fuzz_serial fuzz_virtio fuzz_blk fuzz_agent_proto fuzz_vsock \
              fuzz_http_request fuzz_api_request fuzz_http_response fuzz_scrub fuzz_snapshot \
              fuzz_credential_request fuzz_layer_apply \
              fuzz_tar_in fuzz_copy_tree fuzz_oci_config fuzz_forward fuzz_e2b_wire fuzz_multipart \
              fuzz_disk_control
FUZZERS := $(FUZZ_NAMES:%=$(BUILD)/fuzz/%)
FUZZ_SECONDS ?= 60

.PHONY: fuzz fuzzers
fuzzers: $(FUZZERS) $(BUILD)/fuzz/snapshot-seed $(BUILD)/fuzz/agent-seed

# Writes fuzz_snapshot's seeds (valid state files) at run time.
$(BUILD)/fuzz/snapshot-seed: tests/fuzz/snapshot_seed.c tests/unit/snap_sample.c $(SNAP_FILE_SRCS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ -lfdt

# Writes fuzz_agent_proto's seeds (frames of this AGENT_VERSION) at run time.
$(BUILD)/fuzz/agent-seed: tests/fuzz/agent_seed.c vmm/agent_client/agent_client.c \
                          vmm/agent_client/agent_dir_codec.c vmm/agent_client/agent_cred_codec.c \
                          vmm/agent_client/agent_mount_codec.c vmm/agent_client/agent_exec_proc.c vmm/agent_client/agent_ctr_codec.c vmm/agent_client/agent_linux_codec.c \
                          vmm/agent_client/agent_watch_codec.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^

fuzz: $(FUZZERS) probe guest
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run

.SECONDEXPANSION:
$(BUILD)/fuzz/%: tests/fuzz/%.c $$(FUZZ_SRCS_$$*)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(FUZZ_SRCS_$*) -lpthread $(FUZZ_LIBS_$*)
