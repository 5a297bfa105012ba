/* make_random_model.c — writes a random ANDREA model (tests/support/model_random.h) as Hugging Face
 * GPT-2 safetensors + config.json, for CPU benchmarks that want a large shape without a GPU
 * (bench_gpu_forward writes the same 120M file, but only in a CUDA build).
 *
 *   make_random_model DIR [L H C V maxT seed]    default: ANDREA-120M (12 12 768 50257 1024 1)
 *
 * Copy tests/data/gpt2/{vocab.json,merges.txt} into DIR for GPT-2 BPE token text.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../tests/support/model_random.h"

int main(int argc, char **argv) {
    if (argc != 2 && argc != 8) {
        fprintf(stderr, "usage: make_random_model DIR [L H C V maxT seed]\n");
        return 2;
    }
    andrea_config cfg = {0};
    cfg.n_layer = argc == 8 ? atoi(argv[2]) : 12;
    cfg.n_head = argc == 8 ? atoi(argv[3]) : 12;
    cfg.d_model = argc == 8 ? atoi(argv[4]) : 768;
    cfg.vocab_size = argc == 8 ? atoi(argv[5]) : 50257;
    cfg.max_seq_len = argc == 8 ? atoi(argv[6]) : 1024;
    uint64_t seed = argc == 8 ? strtoull(argv[7], NULL, 10) : 1;
    andrea_model m = {0};
    ae_error err = {{0}};
    if (andrea_model_init_random(&m, &cfg, seed, &err) || andrea_model_save_safetensors(&m, argv[1], "F32", 0, &err)) {
        fprintf(stderr, "make_random_model: %s\n", err.msg);
        return 1;
    }
    andrea_model_free(&m);
    printf("%s: %d layers x %d heads, d_model %d, vocab %d\n", argv[1], cfg.n_layer, cfg.n_head, cfg.d_model,
           cfg.vocab_size);
    return 0;
}
