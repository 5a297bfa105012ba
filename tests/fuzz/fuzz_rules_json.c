/* fuzz_rules_json — label rules files (classify/analyze --rules), strict JSON. */
#include <stdlib.h>

#include "../../analyzer/rules.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ae_error err;
    andrea_rules r;
    andrea_rules_init(&r);
    /* through the file reader, as the CLI does (size limit, regular-file check) */
    const char *path = fuzz_write("rules.json", data, size);
    if (andrea_rules_load(&r, path, &err) == 0) {
        const andrea_pass *p = andrea_pass_for("induction");
        if (p) (void)andrea_rules_for(&r, "induction", p);
    } else {
        fuzz_check_error("andrea_rules_load", &err);
    }
    return 0;
}
