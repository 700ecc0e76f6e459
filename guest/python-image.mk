# guest/python-image.mk: the python3 guest disk; included by the top Makefile
# after guest/guest.mk.
#   make python-image         build/guest/python.ext4 (also part of `make guest`)
#   make python-image-smoke   boot it under QEMU TCG, run python3 -c 'print(6*7)'
#   make python-image-lab     boot it through airlock in the nested lab
# The root tree comes from a cache outside the repo (debootstrap once, about
# 45 s; guest/README.md); the image itself takes about a second.

BUILD ?= build
PYIMG_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
PYIMG_OUT := $(BUILD)/guest
PYIMG := $(PYIMG_OUT)/python.ext4

# What the image is made of (the agent too: it is installed at
# /sbin/airlock-agent, so it must be built first). The cache key (script, package list, the apt
# sources naming the mirror) is checked by the script itself; the sources
# are listed here so that a new mirror snapshot reruns it. wildcard: a
# missing file is the script's to report.
PYIMG_INPUTS := $(PYIMG_DIR)/build-python-image.sh $(PYIMG_DIR)/init \
                $(PYIMG_DIR)/../scripts/packages/python-image.list \
                $(PYIMG_OUT)/agent \
                $(wildcard /bin/busybox /etc/apt/sources.list /etc/apt/sources.list.d/*.sources \
                           /etc/apt/sources.list.d/*.list)

.PHONY: python-image python-image-smoke python-image-lab
python-image: $(PYIMG)
guest: $(PYIMG)

$(PYIMG): $(PYIMG_INPUTS)
	$(PYIMG_DIR)/build-python-image.sh $@

python-image-smoke: $(PYIMG) $(PYIMG_OUT)/vmlinux
	$(PYIMG_DIR)/build-python-image.sh --smoke $(PYIMG)

python-image-lab: $(PYIMG) $(PYIMG_OUT)/vmlinux $(BUILD)/airlock
	tests/lab/run $(BUILD)/airlock boot --kernel $(PYIMG_OUT)/vmlinux --disk $(PYIMG),cow \
	    --cmdline 'console=ttyS0 reboot=k panic=-1 quiet root=/dev/vda rw'
