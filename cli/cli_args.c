/* cli_args.c — option parsers shared by the subcommands, so one option means the same thing and
 * is refused with the same words everywhere (--device, --maps, --step, --ablate-items, --format),
 * and the catalog commands print their rows the same way.
 * Contract: each cli_opt_* returns 0 after storing the value, or prints the usage error
 * ("andrea CMD: --OPT wants ..., not 'ARG'") and returns its exit code 2; the output is not
 * touched on error. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "../common/mpi_shard.h"
#include "../engine/checkpoint.h"
#include "../common/printable.h"
#include "../reports/report.h"

/* Whether s starts as a decimal number is written: a digit, or a sign or '.' before one (strtol
 * and strtod also take leading spaces, and strtod hex such as 0x1p3, which no user means). */
static int starts_as_number(const char *s) {
    if (*s == '+' || *s == '-') s++;
    if (*s == '.') s++;
    return isdigit((unsigned char)*s);
}

int cli_parse_long(const char *s, long lo, long hi, long *out) {
    char *end;
    if (!starts_as_number(s) || strchr(s, '.')) return CLI_NOT_A_NUMBER;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end) return CLI_NOT_A_NUMBER;
    if ((errno == ERANGE && v == LONG_MIN) || v < lo) return CLI_TOO_SMALL;
    if (errno == ERANGE || v > hi) return CLI_TOO_LARGE;
    if (errno) return CLI_NOT_A_NUMBER;
    *out = v;
    return 0;
}

int cli_opt_long(const char *cmd, const char *opt, const char *arg, long lo, long hi, const char *wants, long *out) {
    switch (cli_parse_long(arg, lo, hi, out)) {
    case 0: return 0;
    case CLI_TOO_LARGE: return cli_usage_error(cmd, "%s %s is too large (at most %ld)", opt, arg, hi);
    case CLI_TOO_SMALL: return cli_usage_error(cmd, "%s %s is too small (at least %ld)", opt, arg, lo);
    default: return cli_usage_error(cmd, "%s wants %s, not '%s'", opt, wants, arg);
    }
}

int cli_parse_double(const char *s, double *out) {
    char *end;
    if (!starts_as_number(s) || strpbrk(s, "xX")) return -1;
    errno = 0;
    double v = strtod(s, &end);
    /* nan and inf parse, but no threshold or temperature means them; ERANGE is an absurd value */
    if (errno || end == s || *end || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

/* Whether word names one of the options: --NAME[=...] or an abbreviation getopt_long would take,
 * "--" (the end of the options), or -X with X among shortopts' letters. */
static int names_option(const char *word, const char *shortopts, const struct option *opts) {
    if (word[0] != '-' || !word[1]) return 0;
    if (word[1] != '-') return isalpha((unsigned char)word[1]) && strchr(shortopts, word[1]) != NULL;
    const size_t n = strcspn(word + 2, "=");
    if (n == 0) return word[2] == 0;
    for (const struct option *o = opts; o && o->name; o++)
        if (!strncmp(o->name, word + 2, n)) return 1;
    return 0;
}

/* Whether the option returned as c takes free text (generate --prompt): a value such as "-nice"
 * or "-q is quiet" is text there, so only a word of the --NAME form counts as a forgotten value. */
static int takes_text(int c, const struct option *opts) {
    for (const struct option *o = opts; o && o->name; o++)
        if (o->val == c) return !strcmp(o->name, "prompt");
    return 0;
}

/* Options whose value names a file or folder: '' there is most likely an unset shell variable,
 * and the open that fails on it would print "andrea: : no such catalog" (the path shown empty). */
static const struct {
    const char *name, *what;
} path_options[] = {{"db", "a catalog file"},          {"tokenizer", "a folder"},  {"rules", "a rules file"},
                    {"checkpoint", "a checkpoint path"}, {"text-file", "a file"}, {"also", "a checkpoint path"}};
static const char *empty_option, *empty_wants; /* what CLI_VALUE_IS_EMPTY was returned for */

/* Options that take their values more than once: every --probes (and --texts) source counts, and
 * --also names one more checkpoint each time. */
static const char *const repeatable[] = {"probes", "texts", "also"};
static const char *also_repeatable; /* one more, the command's own (diff's --db, two catalogs) */

void cli_getopt_repeatable(const char *name) { also_repeatable = name; }
static int seen_vals[64], n_seen; /* the value options given so far in this parse */
static const char *twice_option;  /* what CLI_VALUE_GIVEN_TWICE was returned for */

/* The long option of getopt's value c that takes a value and may be given once, or NULL. */
static const char *once_option(int c, const struct option *opts) {
    for (const struct option *o = opts; o && o->name; o++) {
        if (o->val != c || o->has_arg != required_argument) continue;
        for (size_t i = 0; i < sizeof repeatable / sizeof *repeatable; i++)
            if (!strcmp(o->name, repeatable[i])) return NULL;
        if (also_repeatable && !strcmp(o->name, also_repeatable)) return NULL;
        return o->name;
    }
    return NULL;
}

int cli_getopt(int argc, char *const *argv, const char *shortopts, const struct option *opts) {
    if (optind <= 1) n_seen = 0; /* a command's parse starts (each sets optind = 1) */
    const int c = getopt_long(argc, argv, shortopts, opts, NULL);
    /* a value option given twice kept its last value silently (`heads --db a --db b` read b) */
    const char *once = c != -1 ? once_option(c, opts) : NULL;
    for (int i = 0; once && i < n_seen; i++)
        if (seen_vals[i] == c) {
            twice_option = once;
            return CLI_VALUE_GIVEN_TWICE;
        }
    if (once && n_seen < (int)(sizeof seen_vals / sizeof *seen_vals)) seen_vals[n_seen++] = c;
    if (c != -1 && optarg && !optarg[0])
        for (const struct option *o = opts; o && o->name; o++)
            for (size_t i = 0; o->val == c && i < sizeof path_options / sizeof path_options[0]; i++)
                if (!strcmp(o->name, path_options[i].name)) {
                    empty_option = o->name, empty_wants = path_options[i].what;
                    return CLI_VALUE_IS_EMPTY;
                }
    /* the value came as a word of its own (not --opt=VALUE or -oVALUE) */
    if (c != -1 && optarg && optind >= 2 && optarg == argv[optind - 1] && names_option(optarg, shortopts, opts) &&
        (optarg[1] == '-' || !takes_text(c, opts)))
        return CLI_VALUE_IS_OPTION;
    return c;
}

int cli_option_error(const char *cmd, int c, char *const *argv, const struct option *opts) {
    const char *arg = argv[optind - 1];
    char shown[64], shortopt[3] = {'-', (char)optopt, 0};
    if (c == CLI_VALUE_IS_EMPTY) return cli_usage_error(cmd, "--%s wants %s, not ''", empty_option, empty_wants);
    if (c == CLI_VALUE_GIVEN_TWICE) return cli_usage_error(cmd, "--%s is given twice (it takes one value)", twice_option);
    if (c == CLI_VALUE_IS_OPTION) {
        char opt[64];
        andrea_printable(argv[optind - 2], opt, sizeof opt);
        andrea_printable(arg, shown, sizeof shown);
        return cli_usage_error(cmd, "%s needs a value, and the next word '%s' is an option (a file so named: ./%s)",
                               opt, shown, shown);
    }
    if (optopt && strncmp(arg, "--", 2) != 0) arg = shortopt;
    andrea_printable(arg, shown, sizeof shown);
    if (c == ':') return cli_usage_error(cmd, "%s needs a value", shown);
    /* getopt_long also returns '?' for an abbreviation of several long options (--he: --heads, --help) */
    if (!strncmp(arg, "--", 2)) {
        const size_t n = strcspn(arg + 2, "=");
        int matches = 0, exact = -1, last = -1;
        for (int i = 0; opts && opts[i].name; i++)
            if (n > 0 && !strncmp(opts[i].name, arg + 2, n)) {
                matches++, last = i;
                if (strlen(opts[i].name) == n) exact = i;
            }
        const int one = exact >= 0 ? exact : matches == 1 ? last : -1;
        if (one < 0 && matches > 1) return cli_usage_error(cmd, "ambiguous option '%s' (%d options start so)", shown, matches);
        if (one >= 0 && arg[2 + n] == '=' && opts[one].has_arg == no_argument) /* --ids=3 */
            return cli_usage_error(cmd, "--%s takes no value, not '%s'", opts[one].name, shown);
    }
    return cli_usage_error(cmd, "unknown option '%s'", shown);
}

int cli_opt_device(const char *cmd, const char *arg, andrea_device *out) {
    if (!strcmp(arg, "auto")) *out = ANDREA_DEVICE_AUTO;
    else if (!strcmp(arg, "cpu")) *out = ANDREA_DEVICE_CPU;
    else if (!strcmp(arg, "cuda")) *out = ANDREA_DEVICE_CUDA;
    else return cli_usage_error(cmd, "--device wants auto, cpu or cuda, not '%s'", arg);
    return 0;
}

int cli_opt_precision(const char *cmd, const char *arg, andrea_engine_options *eo) {
    if (strcmp(arg, "tf32") && strcmp(arg, "tf32x3") && strcmp(arg, "fp32"))
        return cli_usage_error(cmd, "--precision wants tf32, tf32x3 or fp32, not '%s'", arg);
    snprintf(eo->precision, sizeof eo->precision, "%s", arg); /* andrea_engine_open checks nothing more */
    return 0;
}

int cli_opt_contrib(const char *cmd, const char *arg, andrea_contrib *out) {
    if (!strcmp(arg, "none")) *out = ANDREA_CONTRIB_NONE;
    else if (!strcmp(arg, "norm")) *out = ANDREA_CONTRIB_NORM;
    else if (!strcmp(arg, "full")) *out = ANDREA_CONTRIB_FULL;
    else return cli_usage_error(cmd, "--contrib wants none, norm or full, not '%s'", arg);
    return 0;
}

int cli_opt_probe(const char *cmd, int which, const char *arg, probe_options *po) {
    long v;
    if (which == 'n') {
        char wants[32];
        snprintf(wants, sizeof wants, "1..%d items", PROBE_MAX_ITEMS);
        const int rc = cli_opt_long(cmd, "--n", arg, 1, PROBE_MAX_ITEMS, wants, &v);
        if (rc) return rc;
        po->n_items = (int)v;
    } else if (which == 'l') {
        const int rc = cli_opt_long(cmd, "--len", arg, 5, 1 << 20, "5..1048576 tokens", &v);
        if (rc) return rc;
        po->seq_len = (int)v;
    } else {
        char *end;
        errno = 0;
        unsigned long long s = strtoull(arg, &end, 10);
        /* a digit first: strtoull would take " -1" as 2^64 - 1 */
        if (errno || !isdigit((unsigned char)arg[0]) || *end || s == 0)
            return cli_usage_error(cmd, "--seed wants a positive integer, not '%s'", arg);
        po->seed = s;
    }
    return 0;
}

int cli_opt_maps(const char *cmd, const char *arg, int *maps_fp32) {
    if (!strcmp(arg, "fp16")) *maps_fp32 = 0;
    else if (!strcmp(arg, "fp32")) *maps_fp32 = 1;
    else return cli_usage_error(cmd, "--maps wants fp16 or fp32, not '%s'", arg);
    return 0;
}

int cli_opt_step(const char *cmd, const char *arg, andrea_classify_options *o) {
    char *end;
    errno = 0;
    long long v = strtoll(arg, &end, 10);
    if (errno || !isdigit((unsigned char)arg[0]) || *end || v < 0)
        return cli_usage_error(cmd, "--step wants a step number, not '%s'", arg);
    o->step = v;
    o->has_step = 1;
    return 0;
}

int cli_opt_ablation(const char *cmd, const char *arg, andrea_classify_options *o) {
    if (andrea_ablation_method_parse(arg, &o->ablation) == 0) return 0;
    char shown[96];
    return cli_usage_error(cmd, "--ablation wants one of %s, not '%s'", ANDREA_ABLATION_METHODS,
                           andrea_printable(arg, shown, sizeof shown));
}

int cli_opt_ablate_items(const char *cmd, const char *arg, andrea_classify_options *o) {
    long n;
    const int rc = cli_opt_long(cmd, "--ablate-items", arg, 0, 4096, "0..4096", &n);
    if (rc) return rc;
    o->ablate_items = (int)n;
    return 0;
}

/* --report-maps: heatmap PNGs per head and suite (andrea_render_options.maps_per_suite). */
int cli_opt_report_maps(const char *cmd, const char *arg, int *maps_per_suite) {
    long n;
    if (!strcmp(arg, "all") || !strcmp(arg, "labelled")) {
        *maps_per_suite = arg[0] == 'a' ? ANDREA_REPORT_MAPS_ALL : ANDREA_REPORT_MAPS_LABELLED;
        return 0;
    }
    if (cli_parse_long(arg, 0, 1000, &n)) /* the message names the range and the words */
        return cli_usage_error(cmd, "--report-maps wants 0..1000, 'all' or 'labelled', not '%s'", arg);
    *maps_per_suite = n == 0 ? ANDREA_REPORT_MAPS_NONE : (int)n;
    return 0;
}

/* --report: what a report keeps by default (andrea_render_options.full). */
int cli_opt_report(const char *cmd, const char *arg, int *full) {
    if (strcmp(arg, "small") && strcmp(arg, "full"))
        return cli_usage_error(cmd, "--report is small or full, not '%s'", arg);
    *full = arg[0] == 'f';
    return 0;
}

int cli_opt_format(const char *cmd, const char *arg, int *fmt) {
    int f = andrea_catalog_format_parse(arg);
    if (f < 0) return cli_usage_error(cmd, "--format is table, csv or json, not '%s'", arg);
    *fmt = f;
    return 0;
}

int cli_opt_timeout(const char *cmd, const char *arg, catalog_limits *lim) {
    double s;
    if (cli_parse_double(arg, &s) || s < 0)
        return cli_usage_error(cmd, "--timeout wants seconds 0..1000000 (0: no limit), not '%s'", arg);
    if (s > 1e6) return cli_usage_error(cmd, "--timeout %s is too large (at most 1000000 seconds; 0: no limit)", arg);
    lim->timeout_s = s;
    return 0;
}

int cli_print_rows(catalog_rows *rows, int fmt, ae_error *err) {
    int rc = andrea_catalog_rows_write(stdout, rows, (catalog_format)fmt, err);
    andrea_catalog_rows_free(rows);
    /* a table longer than stdout's buffer fails inside the writer: the same one line as a short one's */
    if (rc && ferror(stdout)) return cli_stdout_done();
    if (rc) return cli_fail(err);
    return cli_stdout_done();
}

int cli_stdout_done(void) {
    if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
    ae_error err;
    andrea_fail(&err, "stdout: write failed");
    return cli_fail(&err);
}

/* One stderr line: msg's control bytes (a newline or escape sequence in a path, in a file name
 * or in a library's message) become '?', so no input can split the line or drive the terminal.
 * Bytes >= 0x80 stay: UTF-8 paths print as they are. */
static char shown_byte(unsigned char c) { return c < 0x20 || c == 0x7f ? '?' : (char)c; }

static void print_one_line(const char *prefix, const char *msg, const char *suffix) {
    fputs(prefix, stderr);
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++) fputc(shown_byte(*p), stderr);
    fputs(suffix, stderr);
    fputc('\n', stderr);
}

int cli_opt_probes(const char *cmd, const char *arg, probe_sources *ps) {
    /* '' is most likely an unset shell variable, not "every suite" (that is the default) */
    if (!*arg) return cli_usage_error(cmd, "--probes wants suite names or a probe file, not ''");
    ae_error err;
    return andrea_probe_sources_add(ps, arg, &err) ? cli_fail(&err) : 0;
}

int cli_opt_texts(const char *cmd, const char *arg, probe_sources *ps) {
    if (!*arg) return cli_usage_error(cmd, "--texts wants a file of texts, one a line ('-': standard input), not ''");
    ae_error err;
    return andrea_probe_sources_add_texts(ps, arg, &err) ? cli_fail(&err) : 0;
}

int cli_fail(const ae_error *err) {
    /* MPI: when another rank's failure stopped this one, that rank prints the line. */
    if (andrea_mpi_report_error()) print_one_line("andrea: ", err->msg[0] ? err->msg : "unknown error", "");
    return 1;
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    char msg[4096], head[128], tail[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(head, sizeof head, "andrea %.64s: ", cmd);
    snprintf(tail, sizeof tail, " (see andrea %.64s --help)", cmd);
    print_one_line(head, msg, tail);
    return 2;
}
