/* Time one full-batch epoch of FANN 2.2 on 8-bit parity, 8-100-1.
 *
 * The same configuration as benchmarks/bench_parity.py and target 1 of
 * benchmarks/targets.py: all 256 patterns of 8-bit parity (inputs and targets
 * in {-1, +1}), FANN_SIGMOID_SYMMETRIC on hidden and output layers at FANN's
 * default steepness 0.5 (== our "symmetric_sigmoid"), FANN_TRAIN_BATCH,
 * learning rate 0.1, weights uniform in [-1, 1].
 *
 * Build (targets.py does this itself when libfann-dev is installed):
 *   gcc -O2 -o fann_epoch_double fann_epoch.c -ldoublefann -lm
 *   gcc -O2 -DFANN_FLOAT -o fann_epoch_float fann_epoch.c -lfloatfann -lm
 *
 * Usage: fann_epoch_<type> [epochs_per_repeat [repeats]]
 * Prints one line: "fann <type> us_per_epoch=<best of repeats> mse0=<...> mse_last=<...>"
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef FANN_FLOAT
#include <floatfann.h>
#define TYPE_NAME "float"
#else
#include <doublefann.h>
#define TYPE_NAME "double"
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv)
{
    const unsigned int bits = 8, n = 1u << 8, hidden = 100;
    int epochs = argc > 1 ? atoi(argv[1]) : 2000;
    int repeats = argc > 2 ? atoi(argv[2]) : 5;
    unsigned int i, b;
    int r, e;
    double best = 1e30, t;
    float mse0, mse = 0.0f;
    struct fann *ann;
    struct fann_train_data *data;

    ann = fann_create_standard(3, bits, hidden, 1);
    fann_set_activation_function_hidden(ann, FANN_SIGMOID_SYMMETRIC);
    fann_set_activation_function_output(ann, FANN_SIGMOID_SYMMETRIC);
    fann_set_training_algorithm(ann, FANN_TRAIN_BATCH);
    fann_set_learning_rate(ann, 0.1f);
    fann_set_learning_momentum(ann, 0.3f); /* FANN's batch step ignores it */
    srand(0);
    fann_randomize_weights(ann, -1.0, 1.0);

    data = fann_create_train(n, bits, 1);
    for (i = 0; i < n; i++) {  /* pattern i is the binary expansion of i, MSB first */
        unsigned int ones = 0;
        for (b = 0; b < bits; b++) {
            unsigned int on = (i >> (bits - 1 - b)) & 1u;
            ones += on;
            data->input[i][b] = on ? 1.0 : -1.0;
        }
        data->output[i][0] = (ones % 2) ? 1.0 : -1.0;
    }

    mse0 = fann_train_epoch(ann, data);
    for (e = 0; e < epochs / 10; e++)  /* warm-up */
        fann_train_epoch(ann, data);
    for (r = 0; r < repeats; r++) {
        t = now();
        for (e = 0; e < epochs; e++)
            mse = fann_train_epoch(ann, data);
        t = (now() - t) / epochs;
        if (t < best)
            best = t;
    }
    printf("fann %s us_per_epoch=%.3f mse0=%.6f mse_last=%.6f\n", TYPE_NAME, best * 1e6, mse0, mse);
    fann_destroy_train(data);
    fann_destroy(ann);
    return 0;
}
