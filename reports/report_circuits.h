/* report_circuits.h — a head page's circuits section, from the catalog's circuit links.
 *
 * Job: the HTML of a head's strongest sources and destinations (catalog/catalog_circuits.h's
 * reader gives the rows; this file only draws them).
 * Failure contract: NULL when out of memory, as when there is nothing to show. */
#ifndef ANDREA_REPORT_CIRCUITS_H
#define ANDREA_REPORT_CIRCUITS_H

#include "../catalog/catalog_circuits.h"

/* The head page's fragment: "<h2>Circuits</h2>" with the top sources and destinations as two
 * tables, each other head linked as "L%d_H%d.html" (pages in one folder). NULL when r is NULL or
 * the catalog holds no circuit scores for the head (the page goes without). */
char *andrea_circuits_head_html(const andrea_circuit_reader *r, int layer, int head);

#endif
