# Unit tests (check), built with ASan + UBSan against the monitor's sources
# ($(SAN_OBJS) from the top-level Makefile).
#
#   make unit-test         builds $(BUILD)/tests/unit-tests and runs it

UNIT_CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
UNIT_CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)
UNIT_CFLAGS  = $(OPT) $(CFLAGS_COMMON) $(SANITIZE) $(UNIT_CHECK_CFLAGS)
UNIT_LIBS    = $(UNIT_CHECK_LIBS) -lpthread -lseccomp -lfdt -lz

UNIT_HELPERS := tests/unit/helpers.c tests/unit/ring.c tests/unit/snap_sample.c
# Every tests/unit/test_*.c is a suite; unit_main.c lists them.
UNIT_SRCS := tests/unit/unit_main.c $(UNIT_HELPERS) $(sort $(wildcard tests/unit/test_*.c))
UNIT_OBJS := $(UNIT_SRCS:%.c=$(BUILD)/san/%.o)

# Exit at the first sanitizer report, and fail the run on leaks.
UNIT_ENV := ASAN_OPTIONS=abort_on_error=0:detect_leaks=1:halt_on_error=1 \
            UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

.PHONY: unit-test

unit-test: $(BUILD)/tests/unit-tests
	$(UNIT_ENV) CK_FORK=no $(BUILD)/tests/unit-tests

$(BUILD)/tests/unit-tests: $(UNIT_OBJS) $(SAN_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $(SANITIZE) -o $@ $^ $(UNIT_LIBS)


# Test sources: the library's sanitizer flags plus check's.
$(BUILD)/san/tests/unit/%.o: tests/unit/%.c | deps-check
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -c -o $@ $<

-include $(UNIT_OBJS:.o=.d)
