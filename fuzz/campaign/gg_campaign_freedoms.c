/*
 * gg_campaign_freedoms.c — what a campaign shows of its coverage of the kernel ABI's freedoms
 * (the analogue of branch coverage for the ABI): in fuzzer_stats, freedoms_exercised X/Y (of
 * the cells, a freedom and an edge class, that the kernel takes) and freedoms_refused, then one
 * line per freedom of the kernel's ops, `freedom_grouped_fwd_ldb : packed=812 pad_small=301
 * ... mis1=refused`, the cases that ran in each class (a class the kernel's dtypes cannot take
 * is left out); in the log's final lines, the same count and the cells no case exercised, each
 * with why: never drawn, or refused by the kernel.
 */
#include <stdio.h>

#include "fuzz/campaign/campaign_int.h"

enum gg_status camp_freedom_stats(struct gg_fuzzer_stats *o, const struct gg_freedom_tally *t)
{
    struct gg_freedom_sum sum = {0};
    int64_t cells[GG_FREEDOMS_MAX][GG_EDGE_COUNT];
    for (int i = 0; i < gg_n_freedoms; i++) {
        gg_freedom_cells(t, i, cells[i]);
        gg_freedom_sum_add(&sum, cells[i]);
    }
    enum gg_status st = gg_fuzzer_stats_add(o, "freedoms_exercised", "%d/%d", sum.exercised,
                                            sum.exercised + sum.never);
    if (st == GG_OK)
        st = gg_fuzzer_stats_add(o, "freedoms_refused", "%d", sum.refused);
    for (int i = 0; i < gg_n_freedoms && st == GG_OK; i++) {
        if (t->edges[i] == 0)
            continue;
        char key[96], line[512];
        gg_freedom_key(i, key, sizeof key);
        gg_freedom_cells_format(cells[i], line, sizeof line);
        st = gg_fuzzer_stats_add(o, key, "%s", line);
    }
    return st;
}

void camp_freedom_final(FILE *f, const struct gg_freedom_tally *t)
{
    struct gg_freedom_sum sum = {0};
    char never[4096] = "", refused[4096] = "";
    for (int i = 0; i < gg_n_freedoms; i++) {
        int64_t cells[GG_EDGE_COUNT];
        gg_freedom_cells(t, i, cells);
        gg_freedom_sum_add(&sum, cells);
        gg_freedom_list_add(never, sizeof never, gg_freedoms[i].name, cells, 0);
        gg_freedom_list_add(refused, sizeof refused, gg_freedoms[i].name, cells,
                            GG_FREEDOM_REFUSED);
    }
    if (sum.exercised + sum.never + sum.refused == 0)
        return;
    fprintf(f, "INFO: freedoms: %d of %d exercised (ABI freedom x edge class cells the kernel "
            "takes)%s%s\n", sum.exercised, sum.exercised + sum.never,
            sum.never ? "; never drawn: " : "", never);
    if (sum.refused)
        fprintf(f, "INFO: freedoms refused by the kernel (%d): %s\n", sum.refused, refused);
}
