# guest/agent/agent.mk: the guest agent (PID 1 of the images) and its
# host-side test client.  Included by the top Makefile:
#     include guest/agent/agent.mk
# and usable on its own:  make -f guest/agent/agent.mk agent agent-client
#   make agent          $(BUILD)/guest/agent        static, for the images
#   make agent-client   $(BUILD)/tests/agent-client (tests/agent/run-tests)
#   make agent-test     runs tests/agent/run-tests on this host (no VM)
# The agent links the protocol codec from vmm/agent_client/ so both ends share one
# decoder (and agent_reader.c, the reader over it); it is built with its own
# flags (static glibc, no sanitizers).

BUILD ?= build
AGENT_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
AGENT_CC ?= gcc
AGENT_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -I. -O2
AGENT_SRCS := $(wildcard $(AGENT_DIR)/*.c) vmm/agent_client/agent_client.c vmm/agent_client/forward_hello.c vmm/agent_client/agent_dir_codec.c \
              vmm/agent_client/agent_cred_codec.c vmm/agent_client/agent_mount_codec.c vmm/agent_client/agent_exec_proc.c vmm/agent_client/agent_ctr_codec.c vmm/agent_client/agent_linux_codec.c \
              vmm/agent_client/agent_reader.c vmm/agent_client/agent_watch_codec.c
AGENT_HDRS := $(wildcard $(AGENT_DIR)/*.h) vmm/agent_client/agent_client.h vmm/agent_client/forward_hello.h vmm/agent_client/wire.h
AGENT_CLIENT_SRCS := tests/agent/client.c vmm/agent_client/agent_client.c vmm/agent_client/agent_reader.c vmm/agent_client/agent_dir_codec.c vmm/agent_client/agent_cred_codec.c vmm/agent_client/agent_mount_codec.c vmm/agent_client/agent_exec_proc.c vmm/agent_client/agent_ctr_codec.c vmm/agent_client/agent_linux_codec.c vmm/agent_client/agent_conn.c vmm/agent_client/agent_exec.c vmm/agent_client/agent_client_io.c vmm/agent_client/agent_dir.c \
                     vmm/agent_client/agent_watch_codec.c vmm/agent_client/agent_watch.c vmm/util/nbfd.c

.PHONY: agent agent-client agent-test
agent: $(BUILD)/guest/agent
agent-client: $(BUILD)/tests/agent-client

$(BUILD)/guest/agent: $(AGENT_SRCS) $(AGENT_HDRS) $(AGENT_DIR)/agent.mk
	@mkdir -p $(dir $@)
	$(AGENT_CC) $(AGENT_CFLAGS) -static -o $@ $(AGENT_SRCS)

$(BUILD)/tests/agent-client: $(AGENT_CLIENT_SRCS) $(AGENT_HDRS) vmm/util/exit_codes.h
	@mkdir -p $(dir $@)
	$(AGENT_CC) $(AGENT_CFLAGS) -g -o $@ $(AGENT_CLIENT_SRCS)

agent-test: $(BUILD)/guest/agent $(BUILD)/tests/agent-client
	tests/agent/run-tests
