/* Bare-metal Cortex-M4F program: an exported float32 DFOP (d = 6) learns a
 * drifting linear stream generated on the device, and reports through
 * semihosting. Build and run (qemu's MPS2 AN386 board):
 *
 *   python -m edgereg export DFOP --features 6 --dtype float32 \
 *       --target thumbv7em-unknown-none-eabihf --cpu cortex-m4 --out build
 *   arm-none-eabi-gcc -O2 -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 \
 *       -ffunction-sections -fdata-sections -nostartfiles --specs=nosys.specs \
 *       -Wl,--gc-sections -T mps2.ld -I build startup.c main.c build/edgereg_dfop.o -lm \
 *       -o dfop.elf
 *   qemu-system-arm -M mps2-an386 -nographic -monitor none -serial none \
 *       -semihosting-config enable=on,target=native -kernel dfop.elf
 */
#include <stdint.h>

#include "edgereg_dfop.h"

#ifndef BOARD /* the name printed; ../riscv/measure.py builds this file too */
#define BOARD "Cortex-M4F"
#endif

void semihost_write(const char *text);
void stack_paint(void);
unsigned stack_used(void);

static edgereg_dfop_state model; /* in .bss: the only RAM the model needs */

static uint32_t rng = 12345u;
static float uniform(void) { /* xorshift32 in [-1, 1) */
    rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5;
    return (float)(rng >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

static char *put_uint(char *p, uint32_t v) {
    char t[12]; int k = 0;
    do { t[k++] = (char)('0' + v % 10u); v /= 10u; } while (v);
    while (k) *p++ = t[--k];
    return p;
}

int main(void) {
    edgereg_dfop_init(&model);
    const float w1[6] = {1, -2, 0.5f, 0, 3, -1}, w2[6] = {-1, 2, 0, 1, -3, 0.5f};
    uint32_t close = 0, stack = 0;
    for (uint32_t t = 0; t < 2000; t++) {
        edgereg_dfop_real x[6];
        float y = 0;
        for (int j = 0; j < 6; j++) {
            x[j] = (edgereg_dfop_real)uniform();
            y += (t < 1000 ? w1[j] : w2[j]) * (float)x[j];
        }
        edgereg_dfop_yreal yhat; /* float for a float32 export: no double anywhere */
        if (t == 500) stack_paint();
        edgereg_dfop_learn_one(&model, x, y, &yhat);
        if (t == 500) stack = stack_used(); /* bytes written below main's frame */
        float err = (float)yhat - y;
        if ((t % 1000) > 500 && err * err < 1e-4f) close++; /* tracked both regimes */
    }
    char line[128], *p = line;
    const char *msg = "DFOP on " BOARD ": close predictions ";
    while (*msg) *p++ = *msg++;
    p = put_uint(p, close);
    *p++ = '/'; p = put_uint(p, 998);
    msg = ", stack of learn_one "; while (*msg) *p++ = *msg++;
    p = put_uint(p, stack); *p++ = '\n'; *p = 0;
    semihost_write(line);
    return close > 900 ? 0 : 1;
}
