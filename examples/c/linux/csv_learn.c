/* Learn from a CSV stream with an exported DFOP, no Python: each line holds
 * EDGEREG_DFOP_N_FEATURES inputs then the target; an empty target means
 * "predict only". Prints one prediction per line (made before learning).
 *
 *   python -m edgereg export DFOP --features 6 --param on_invalid=skip --out build
 *   cc -O2 -std=c11 -I build csv_learn.c build/edgereg_dfop.o -lm -o csv_learn
 *   ./csv_learn < stream.csv
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgereg_dfop.h"

#define D EDGEREG_DFOP_N_FEATURES

int main(void) {
    static edgereg_dfop_state model; /* the whole model: caller-owned, no heap */
    edgereg_dfop_init(&model);
    char line[4096];
    long row = 0, refused = 0;
    while (fgets(line, sizeof line, stdin)) {
        row++;
        edgereg_dfop_real x[D];
        char *p = line, *end;
        int ok = 1;
        for (int j = 0; j < D && ok; j++) {
            x[j] = (edgereg_dfop_real)strtod(p, &end);
            ok = end != p && (*end == ',' || j == D - 1);
            p = *end == ',' ? end + 1 : end;
        }
        if (!ok) {
            fprintf(stderr, "line %ld: expected %d numbers\n", row, D);
            continue;
        }
        double y = strtod(p, &end), yhat;
        if (end == p) { /* no target: predict only */
            printf("%.17g\n", edgereg_dfop_predict_one(&model, x));
            continue;
        }
        if (edgereg_dfop_learn_one(&model, x, y, &yhat) != EDGEREG_DFOP_OK) refused++;
        printf("%.17g\n", yhat);
    }
    fprintf(stderr, "%ld rows, %ld refused (NaN/inf or an update that would overflow)\n",
            row, refused);
    return 0;
}
