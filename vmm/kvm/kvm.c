#include "vmm/kvm/kvm.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Every capability airlock uses, with why. */
static const struct {
    int cap;
    const char *name;
} required_caps[] = {
    {KVM_CAP_USER_MEMORY, "USER_MEMORY (guest RAM from our mappings)"},
    {KVM_CAP_IRQCHIP, "IRQCHIP (in-kernel PIC/IOAPIC/LAPIC)"},
    {KVM_CAP_PIT2, "PIT2 (in-kernel timer)"},
    {KVM_CAP_EXT_CPUID, "EXT_CPUID (filtered CPUID per vCPU)"},
    {KVM_CAP_SET_TSS_ADDR, "SET_TSS_ADDR"},
    {KVM_CAP_IMMEDIATE_EXIT, "IMMEDIATE_EXIT (stopping vCPUs without races)"},
    {KVM_CAP_MP_STATE, "MP_STATE (secondary vCPUs wait for INIT/SIPI)"},
    {KVM_CAP_IRQFD, "IRQFD (virtio interrupts without a vCPU exit)"},
    {KVM_CAP_IOEVENTFD, "IOEVENTFD (virtio notifications without a vCPU exit)"},
};

bool kvm_backend_is_pvm(void)
{
    return access("/sys/module/kvm_pvm", F_OK) == 0;
}

int kvm_open(struct kvm *kvm, const char *path, char *err, size_t errlen)
{
    memset(kvm, 0, sizeof(*kvm));
    kvm->fd = open(path, O_RDWR | O_CLOEXEC);
    if (kvm->fd < 0) {
        int e = errno;
        if (e == ENOENT)
            snprintf(err, errlen, "%s does not exist: this host offers no KVM (is the kvm module loaded?)", path);
        else if (e == EACCES || e == EPERM)
            snprintf(err, errlen, "%s: permission denied (add the user to group 'kvm' or run as root)", path);
        else
            snprintf(err, errlen, "%s: %s", path, strerror(e));
        return -e;
    }
    int api = ioctl(kvm->fd, KVM_GET_API_VERSION, 0);
    if (api != KVM_API_VERSION) {
        snprintf(err, errlen, "%s is not a usable KVM device (API version %d, want %d)", path,
                 api, KVM_API_VERSION);
        kvm_close(kvm);
        return -ENODEV;
    }
    for (size_t i = 0; i < sizeof(required_caps) / sizeof(required_caps[0]); i++) {
        if (ioctl(kvm->fd, KVM_CHECK_EXTENSION, required_caps[i].cap) <= 0) {
            snprintf(err, errlen, "%s lacks KVM capability %s", path, required_caps[i].name);
            kvm_close(kvm);
            return -ENOTSUP;
        }
    }
    kvm->vcpu_mmap_size = ioctl(kvm->fd, KVM_GET_VCPU_MMAP_SIZE, 0);
    if (kvm->vcpu_mmap_size < (int)sizeof(struct kvm_run)) {
        snprintf(err, errlen, "%s: KVM_GET_VCPU_MMAP_SIZE returned %d", path, kvm->vcpu_mmap_size);
        kvm_close(kvm);
        return -ENODEV;
    }
    kvm->max_vcpus = ioctl(kvm->fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);
    if (kvm->max_vcpus <= 0)
        kvm->max_vcpus = ioctl(kvm->fd, KVM_CHECK_EXTENSION, KVM_CAP_NR_VCPUS);
    if (kvm->max_vcpus <= 0)
        kvm->max_vcpus = 4; /* api.rst: assume 4 when neither is reported */
    kvm->pvm = kvm_backend_is_pvm();
    /* Asked here, once: the snapshot thread that reads CPUID again may
     * not ask KVM_CHECK_EXTENSION. */
    kvm->tsc_deadline = ioctl(kvm->fd, KVM_CHECK_EXTENSION, KVM_CAP_TSC_DEADLINE_TIMER) > 0;
    return 0;
}

void kvm_close(struct kvm *kvm)
{
    if (kvm->fd >= 0)
        close(kvm->fd);
    kvm->fd = -1;
}
