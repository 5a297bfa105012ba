/* report_circuits.c — a head page's circuits section (report_circuits.h). */
#include "report_circuits.h"

#include "../common/buf.h"

char *andrea_circuits_head_html(const andrea_circuit_reader *r, int layer, int head) {
    const circuit_link *src, *dst;
    if (!r) return NULL;
    const int ns = andrea_circuit_reader_links(r, layer, head, 1, &src);
    const int nd = andrea_circuit_reader_links(r, layer, head, 0, &dst);
    if (ns == 0 && nd == 0) return NULL;
    andrea_buf s = {0};
    andrea_buf_printf(&s, "<h2>Circuits (from the weights)</h2>\n<p>Composition scores ||M||<sub>F</sub> / "
                          "(||A||<sub>F</sub> ||B||<sub>F</sub>); random matrices of these shapes score %.3f on "
                          "average (docs/scores.md).</p>\n",
                      ns ? src[0].baseline : dst[0].baseline);
    for (int side = 0; side < 2; side++) {
        const circuit_link *v = side ? dst : src;
        const int n = side ? nd : ns;
        andrea_buf_printf(&s, "<h3>%s</h3>\n", side ? "Top destinations (later heads reading this head's output)"
                                                    : "Top sources (earlier heads writing into this head's input)");
        if (!n) {
            andrea_buf_printf(&s, "<p>none (%s layer)</p>\n", side ? "last" : "first");
            continue;
        }
        andrea_buf_puts(&s, "<table class=\"circuits\">\n<tr><th class=\"l\">head</th><th>kind</th><th>score</th></tr>\n");
        for (int i = 0; i < n; i++)
            andrea_buf_printf(&s,
                              "<tr><td class=\"l\"><a href=\"L%d_H%d.html\">L%d H%d</a></td><td>%c</td><td>%.3f</td></tr>\n",
                              v[i].layer, v[i].head, v[i].layer, v[i].head, v[i].kind, v[i].score);
        andrea_buf_puts(&s, "</table>\n");
    }
    if (andrea_buf_failed(&s)) andrea_buf_free(&s);
    return s.s;
}
