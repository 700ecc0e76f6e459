# Unit tests (check), built with ASan + UBSan against the monitor's sources
# ($(SAN_OBJS) from the top-level Makefile).
#
#   make unit-test         builds $(BUILD)/tests/unit-tests and runs it
#
# CK_FORK=no: one process, so ASan and LSan see the whole run; each test is
# still held to its tcase's timeout by unit_main.c's watchdog (check's own
# timeouts need fork).  It prints "unit: N passed, N failed, N skipped".

UNIT_CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
UNIT_CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)
UNIT_CFLAGS  = $(OPT) $(CFLAGS_COMMON) $(SANITIZE) $(UNIT_CHECK_CFLAGS)
UNIT_LIBS    = $(UNIT_CHECK_LIBS) $(LDLIBS) -lelf

UNIT_HELPERS := tests/unit/helpers.c tests/unit/ring.c tests/unit/snap_sample.c \
                tests/unit/scrub_ref.c
# Every tests/unit/test_*.c is a suite; unit_main.c lists them.
UNIT_SRCS := tests/unit/unit_main.c $(UNIT_HELPERS) $(sort $(wildcard tests/unit/test_*.c))
UNIT_OBJS := $(UNIT_SRCS:%.c=$(BUILD)/san/%.o)

# test_smp_unlock.c: the guest build's lock patcher (guest/smp_unlock/,
# not part of the monitor), on a small ELF the real assembler and linker
# make with the kernel's symbols.
SMP_LOCKS_FIXTURE := $(BUILD)/tests/smp-locks-fixture.elf
UNIT_OBJS += $(BUILD)/san/guest/smp_unlock/smp_unlock.o
$(SMP_LOCKS_FIXTURE): tests/unit/smp_locks_fixture.S
	@mkdir -p $(dir $@)
	$(CC) -nostdlib -static -no-pie -e _text -Wl,-Ttext=0xffffffff81000000 -Wl,--build-id=none \
	    -o $@ $<
$(BUILD)/san/tests/unit/test_smp_unlock.o: UNIT_CFLAGS += -DSMP_LOCKS_FIXTURE='"$(SMP_LOCKS_FIXTURE)"'
$(BUILD)/san/tests/unit/test_smp_unlock.o: $(SMP_LOCKS_FIXTURE)

# Exit at the first sanitizer report, and fail the run on leaks.
UNIT_ENV := ASAN_OPTIONS=abort_on_error=0:detect_leaks=1:halt_on_error=1 \
            UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

.PHONY: unit-test

unit-test: $(BUILD)/tests/unit-tests
	$(UNIT_ENV) CK_FORK=no $(BUILD)/tests/unit-tests

# unit_main.c wraps these check entry points to time each test and to
# count skips (check is a static library here, so its own calls wrap too).
UNIT_WRAP := -Wl,--wrap=tcase_fn_start,--wrap=tcase_create,--wrap=_tcase_add_test \
             -Wl,--wrap=tcase_set_timeout,--wrap=_ck_assert_failed

$(BUILD)/tests/unit-tests: $(UNIT_OBJS) $(SAN_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $(SANITIZE) $(UNIT_WRAP) -o $@ $^ $(UNIT_LIBS)


# Test sources: the library's sanitizer flags plus check's.
$(BUILD)/san/tests/unit/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -c -o $@ $<

-include $(UNIT_OBJS:.o=.d)
