/* Minimal RV32 start-up for the exported edgereg kernels on qemu's `virt`
 * machine (`-bios none`: the reset ROM jumps to 0x80000000, where _start is
 * linked): global pointer, stack, trap handler, the FPU on (F extension:
 * mstatus.FS), .data copied and .bss cleared, main, then semihosting exit.
 * No C library start-up code and no heap: the exported code needs none.
 * The same file builds for rv32imac (-mabi=ilp32) and rv32imafc (ilp32f). */
#include <stdint.h>
#include <string.h>

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss;
int main(void);

__asm__(".section .text.init, \"ax\"\n"
        ".globl _start\n"
        "_start:\n"
        ".option push\n"
        ".option norelax\n"
        "  la gp, __global_pointer$\n" /* not relaxed against itself */
        ".option pop\n"
        "  la sp, _estack\n"
        "  j c_start\n");

/* Semihosting (ARM's debug-monitor calls, answered by qemu -semihosting): on
 * RISC-V the op in a0, its argument in a1, and an ebreak between the two
 * marker instructions, uncompressed and within one page (section aligned 16). */
uintptr_t semihost(uintptr_t op, const void *arg);
__asm__(".section .text.semihost, \"ax\"\n"
        ".balign 16\n"
        ".globl semihost\n"
        "semihost:\n"
        ".option push\n"
        ".option norvc\n"
        "  slli zero, zero, 0x1f\n"
        "  ebreak\n"
        "  srai zero, zero, 7\n"
        "  ret\n"
        ".option pop\n");

void semihost_write(const char *text) { semihost(0x04, text); } /* SYS_WRITE0 */

static void __attribute__((noreturn)) semihost_exit(int code) {
    /* SYS_EXIT (RV32: the reason in a1): ApplicationExit is status 0, a
     * run-time error status 1. */
    semihost(0x18, (const void *)(uintptr_t)(code == 0 ? 0x20026u : 0x20023u));
    for (;;) {}
}

/* Any exception (illegal instruction, misaligned or bad access): report, fail. */
static void __attribute__((aligned(4), used)) trap_handler(void) {
    semihost_write("FAULT\n");
    semihost_exit(1);
}

void __attribute__((noreturn, used)) c_start(void) {
    /* CSR instructions are the Zicsr extension, which rv32imac leaves out of
     * -march for binutils 2.38 and later; named here for this file only. */
    __asm__ volatile(".option push\n .option arch, +zicsr\n csrw mtvec, %0\n .option pop"
                     : : "r"(trap_handler));
#if defined(__riscv_flen)
    __asm__ volatile("csrs mstatus, %0" : : "r"(0x6000u)); /* FS = dirty: FPU on */
    __asm__ volatile("csrw fcsr, zero");                    /* round to nearest */
#endif
    memcpy(&_sdata, &_sidata, (size_t)((char *)&_edata - (char *)&_sdata));
    memset(&_sbss, 0, (size_t)((char *)&_ebss - (char *)&_sbss));
    semihost_exit(main());
}

#include "../stack_paint.h" /* stack_paint, stack_used */
