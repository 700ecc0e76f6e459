# `airlock surface`'s reachable-code figure (included from the Makefile).
# Every monitor source is compiled a second time at -O0 with
# -fcallgraph-info (GCC writes one call graph per file, $(BUILD)/ci/*.ci);
# scripts/surface-reach walks them from SURFACE_ROOTS and writes
# $(BUILD)/gen/surface_reach.c, linked into airlock only (the unit tests
# link without it and see "unknown").

# The functions the guest can make run.  Indirect calls are not followed,
# so every callback handed out on a guest path is listed here; the surface
# test fails when a handler the report shows is not.
SURFACE_ROOTS := \
    vcpu_handle_exit vcpu_io vcpu_mmio vcpu_intr vcpu_triple_fault vcpu_halt \
    vcpu_internal_error vcpu_fail_entry vcpu_system_event \
    serial_io i8042_data_io i8042_cmd_io boot_timer_io virtio_mmio_io \
    blk_features blk_config_read blk_queue_notify \
    vsock_features vsock_config_read vsock_queue_notify vsock_reset \
    vdev_on_notify vdev_interrupt vdev_kick \
    serial_tx serial_set_irq serial_rx_ready kbd_reset on_console_reader_gone \
    host_connect_port host_watch host_conn_cap host_on_conn_event virtio_vsock_fd_event \
    run_serve_port conn_thread run_thread snapshot_thread \
    run_fwd_answer run_fwd_ended fwd_conn_answer fwd_conn_ended

SURFACE_CI := $(patsubst %.c,$(BUILD)/ci/%.ci,$(LIB_SRCS) vmm/cli/main.c)

$(BUILD)/ci/%.ci: %.c
	@mkdir -p $(dir $@)
	$(CC) -O0 $(CFLAGS_COMMON) -fcallgraph-info -MT $@ -c -o $(@:.ci=.o) $<

$(BUILD)/gen/surface_reach.c: $(SURFACE_CI) scripts/surface-reach vmm/report/surface.mk
	@mkdir -p $(dir $@)
	scripts/surface-reach $@ "$(SURFACE_ROOTS)" $(SURFACE_CI)

$(BUILD)/gen/surface_reach.o: $(BUILD)/gen/surface_reach.c vmm/report/surface.h
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/airlock: $(BUILD)/gen/surface_reach.o

-include $(SURFACE_CI:.ci=.d)

# Layers point one way (each folder's README.md says what it may use), and
# no two files call each other: checked on the same call graphs.
.PHONY: check-layers
check-layers: $(SURFACE_CI)
	@scripts/check-layers $(SURFACE_CI)
