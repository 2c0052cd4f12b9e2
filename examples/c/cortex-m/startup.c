/* Minimal Cortex-M startup for the exported edgereg kernels: vector table,
 * .data/.bss set-up, the FPU enabled (M4F/M7), main, then semihosting exit.
 * No C library start-up code and no heap: the exported code needs none. */
#include <stdint.h>
#include <string.h>

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
int main(void);

/* Semihosting (ARM's debug-monitor calls, answered by qemu -semihosting). */
static int semihost(int op, const void *arg) {
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void semihost_write(const char *text) { semihost(0x04, text); } /* SYS_WRITE0 */

static void semihost_exit(int code) {
    /* SYS_EXIT (AArch32: the reason in r1): ApplicationExit is status 0, a
     * run-time error status 1. */
    semihost(0x18, (const void *)(code == 0 ? 0x20026u : 0x20023u));
    for (;;) {}
}

void Reset_Handler(void) {
#if defined(__ARM_FP)
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20; /* CPACR: CP10, CP11 full access */
    __asm__ volatile("dsb\n isb");
#endif
    memcpy(&_sdata, &_sidata, (size_t)((char *)&_edata - (char *)&_sdata));
    memset(&_sbss, 0, (size_t)((char *)&_ebss - (char *)&_sbss));
    semihost_exit(main());
}

static void Fault_Handler(void) {
    semihost_write("FAULT\n");
    semihost_exit(1);
}

__attribute__((section(".isr_vector"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))&_estack, Reset_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler, Fault_Handler, Fault_Handler, 0, 0, 0, 0,
    Fault_Handler, Fault_Handler, 0, Fault_Handler, Fault_Handler,
};

#include "../stack_paint.h" /* stack_paint, stack_used */
