/*
 * gg_report_plot.c — the report's plots, drawn by gnuplot into PNG files: SNR margin per suite
 * case (worst-group SNR minus threshold, failing cases in red), per-group SNR of one case against
 * its threshold (a bad expert stands out as one short red bar), a campaign's bugs, signatures,
 * coverage and speed over time, its cases per second per GPU, and the nights side by side (bugs,
 * new bugs and cases per night). Data and script go through temporary files in the output directory;
 * gnuplot's exit status and its messages decide whether a plot was made.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "reports/report_int.h"

#define COLOR_PASS 0x2e7d32
#define COLOR_FAIL 0xc62828
#define COLOR_REGRESSED 0xef6c00
#define COLOR_OTHER 0x9e9e9e
#define COLOR_GROUP 0x1565c0
#define LABEL_MAX 40     /* characters of a case name under the margin plot */
#define LABELS_MAX 80    /* cases past this get every k-th name only */

static int executable(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

void gg_report_plot_init(struct gg_plotter *p, const char *out_dir)
{
    memset(p, 0, sizeof *p);
    p->out_dir = out_dir;
    const char *env = getenv("GGFUZZ_GNUPLOT");
    if (env != NULL && env[0] != '\0') {
        p->available = executable(env) && strlen(env) < sizeof p->exe;
        if (p->available)
            snprintf(p->exe, sizeof p->exe, "%s", env);
        else
            snprintf(p->why, sizeof p->why, "GGFUZZ_GNUPLOT=%s is not an executable file", env);
        return;
    }
    const char *path = getenv("PATH");
    char *dirs = strdup(path && *path ? path : "/usr/bin:/bin"), *save = NULL;
    for (char *d = dirs ? strtok_r(dirs, ":", &save) : NULL; d && !p->available;
         d = strtok_r(NULL, ":", &save)) {
        int n = snprintf(p->exe, sizeof p->exe, "%s/gnuplot", d);
        p->available = n > 0 && (size_t)n < sizeof p->exe && executable(p->exe);
    }
    free(dirs);
    if (!p->available) {
        p->exe[0] = '\0';
        snprintf(p->why, sizeof p->why, "gnuplot was not found on PATH");
    }
}

/* ---- one gnuplot run ----------------------------------------------------------------------- */

/* The files of one plot: data and script are written by the caller, then run_job() runs them. */
struct job {
    char dat[4096], gp[4096], log[4096], png[4096];
    FILE *data, *script;
};

static void job_discard(struct job *j)
{
    if (j->data)
        fclose(j->data);
    if (j->script)
        fclose(j->script);
    j->data = j->script = NULL;
    unlink(j->dat);
    unlink(j->gp);
    unlink(j->log);
}

/* A gnuplot single-quoted string: '' stands for one quote. */
static void gq(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
    fputc('\'', f);
}

/* A text field of a tab-separated data file: no tabs, newlines or double quotes inside. */
static void data_text(FILE *f, const char *s, size_t max)
{
    size_t n = 0;
    for (; *s && n < max; s++, n++)
        fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s == '"' ? '\'' : *s, f);
    if (*s)
        fputs("...", f);
    if (n == 0)
        fputc('-', f);
}

/* A number, or '?' (gnuplot's missing value) when unset or not finite. */
static void data_num(FILE *f, double v, int set)
{
    if (set && isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fputc('?', f);
}

/*
 * Opens the data and script files of a plot writing out_dir/png, and writes the script's preamble:
 * a PNG terminal of width x height (pngcairo where gnuplot has it, else libgd's png), plain text
 * labels (no enhanced-text markup, so '_' stays '_'), tab-separated data with '?' for missing.
 */
static enum gg_status job_open(struct gg_plotter *p, const char *png, int width, int height,
                               struct job *j, char *err, size_t err_len)
{
    memset(j, 0, sizeof *j);
    int seq = p->seq++;
    long pid = (long)getpid();
    snprintf(j->dat, sizeof j->dat, "%s/.plot-%ld-%d.dat", p->out_dir, pid, seq);
    snprintf(j->gp, sizeof j->gp, "%s/.plot-%ld-%d.gp", p->out_dir, pid, seq);
    snprintf(j->log, sizeof j->log, "%s/.plot-%ld-%d.log", p->out_dir, pid, seq);
    snprintf(j->png, sizeof j->png, "%s/%s", p->out_dir, png);
    unlink(j->png);
    j->data = fopen(j->dat, "w");
    j->script = fopen(j->gp, "w");
    if (j->data == NULL || j->script == NULL) {
        snprintf(err, err_len, "%s: cannot write plot files: %s", p->out_dir, strerror(errno));
        job_discard(j);
        return GG_E_IO;
    }
    FILE *s = j->script;
    fprintf(s, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
               "  set terminal pngcairo size %d,%d noenhanced font 'sans,10'\n"
               "} else {\n"
               "  set terminal png size %d,%d noenhanced\n"
               "}\n", width, height, width, height);
    fputs("set output ", s);
    gq(s, j->png);
    fputs("\nset datafile separator '\\t'\nset datafile missing '?'\n"
          "set border 3 lc rgb '#555555'\nset tics nomirror\n"
          "set grid ytics lc rgb '#dddddd' dt 1\nset style fill solid 0.85 noborder\n"
          "set key top right opaque box lc rgb '#cccccc'\n", s);
    fputs("data = ", s);
    gq(s, j->dat);
    fputc('\n', s);
    return GG_OK;
}

/* The last lines gnuplot printed (its error message), joined into buf. */
static void log_tail(const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    char text[2048];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    size_t at = 0;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        while (*line == ' ' || *line == '^')
            line++;
        if (*line && at < len)
            at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? " | " : "", line);
    }
}

/* Runs gnuplot on the job's script; GG_OK when it exited 0 and left a non-empty PNG. */
static enum gg_status run_job(struct gg_plotter *p, struct job *j, char *err, size_t err_len)
{
    int bad = ferror(j->data) | ferror(j->script);
    bad |= fclose(j->data) != 0;
    bad |= fclose(j->script) != 0;
    j->data = j->script = NULL;
    if (bad) {
        snprintf(err, err_len, "%s: cannot write plot files: %s", p->out_dir, strerror(errno));
        job_discard(j);
        return GG_E_IO;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, j->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    char arg0[] = "gnuplot";
    char *argv[] = {arg0, j->gp, NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, p->exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        snprintf(err, err_len, "%s could not be started: %s", p->exe, strerror(rc));
        job_discard(j);
        return GG_E_IO;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    enum gg_status st = GG_OK;
    struct stat sb;
    char tail[600];
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        log_tail(j->log, tail, sizeof tail);
        if (WIFEXITED(status))
            snprintf(err, err_len, "gnuplot exited with status %d on %s: %s",
                     WEXITSTATUS(status), j->png, tail[0] ? tail : "no message");
        else
            snprintf(err, err_len, "gnuplot was killed by signal %d on %s", WTERMSIG(status),
                     j->png);
        st = GG_E_IO;
    } else if (stat(j->png, &sb) != 0 || sb.st_size == 0) {
        snprintf(err, err_len, "gnuplot exited normally but wrote no image to %s", j->png);
        st = GG_E_IO;
    }
    if (st != GG_OK)
        unlink(j->png);
    job_discard(j);
    return st;
}

/* ---- the plots ----------------------------------------------------------------------------- */

static int verdict_color(const char *verdict)
{
    if (strcmp(verdict, "pass") == 0)
        return COLOR_PASS;
    if (strcmp(verdict, "regressed") == 0)
        return COLOR_REGRESSED;
    return gg_suite_verdict_bad(verdict) ? COLOR_FAIL : COLOR_OTHER;
}

/* A y range [lo, hi] that holds 0, every value seen and a margin of 8% of the span. */
struct span {
    double lo, hi;
};

static void span_add(struct span *s, double v)
{
    if (isfinite(v)) {
        s->lo = fmin(s->lo, v);
        s->hi = fmax(s->hi, v);
    }
}

/* Sets the y range and returns its lower end. The range holds 0 (below 0 only when a value
   is), with 8% of the span above; floor_pad also leaves 8% below the lowest value when it is
   close to the bottom, so that a bar drawn up from the bottom to it stays visible. */
static double span_set(FILE *f, struct span s, int floor_pad)
{
    double pad = 0.08 * (s.hi - s.lo > 1 ? s.hi - s.lo : 1);
    double lo = s.lo < 0 ? s.lo - pad : 0;
    if (floor_pad && s.lo < pad)
        lo = s.lo - pad;
    fprintf(f, "set yrange [%.6g:%.6g]\n", lo, s.hi + pad);
    return lo;
}

enum gg_status gg_report_plot_margins(struct gg_plotter *p, const struct gg_rsuite *s,
                                      const char *png, char *err, size_t err_len)
{
    size_t n = s->n_cases, longest = 1, missing = 0;
    size_t stride = n > LABELS_MAX ? (n + LABELS_MAX - 1) / LABELS_MAX : 1;
    for (size_t i = 0; i < n; i += stride) {
        size_t len = strlen(s->cases[i].label);
        longest = len > longest ? len : longest;
    }
    longest = longest > LABEL_MAX ? LABEL_MAX + 3 : longest;
    /* Names are drawn at 60 degrees under the axis: about 5 pixels of height per character. */
    int below = (int)(5.0 * (double)longest) + 40;
    int width = (int)fmin(4000, fmax(900, 160 + 16.0 * (double)n)), height = 380 + below;
    struct job j;
    enum gg_status st = job_open(p, png, width, height, &j, err, err_len);
    if (st != GG_OK)
        return st;
    struct span sp = {0, 0};
    for (size_t i = 0; i < n; i++) {
        const struct gg_rcase *c = &s->cases[i];
        fprintf(j.data, "%zu\t", i);
        if (i % stride == 0)
            data_text(j.data, c->label, LABEL_MAX);
        fputc('\t', j.data);
        data_num(j.data, c->margin_db.v, c->margin_db.set);
        fprintf(j.data, "\t%d\t%s\n", verdict_color(c->verdict), c->margin_db.set ? "?" : "0");
        if (c->margin_db.set)
            span_add(&sp, c->margin_db.v);
        missing += !c->margin_db.set;
    }
    FILE *f = j.script;
    fputs("set title 'SNR margin per case: worst-group SNR minus its threshold (dB); below 0 "
          "fails'\nset ylabel 'margin (dB)'\n", f);
    /* The first names reach left of the first bar by about 2.5 pixels per character. */
    fprintf(f, "set xrange [-0.6:%.1f]\nset bmargin at screen %.4f\nset lmargin at screen %.4f\n",
            (double)n - 0.4, (double)below / height,
            fmax(0.07, (2.5 * (double)longest + 10) / width));
    span_set(f, sp, 0);
    fputs("set xtics rotate by 60 right font ',8'\nset boxwidth 0.75 absolute\n"
          "set key outside top center horizontal\n", f);
    /* Bars take their colour from column 4; cases without a margin get a grey mark on the axis
       (column 5), so that their absence is visible. */
    fprintf(f, "plot data using 1:3:4:xtic(2) with boxes lc rgb variable notitle, \\\n"
               "  keyentry with boxes lc rgb '#%06x' title 'pass', \\\n"
               "  keyentry with boxes lc rgb '#%06x' title 'fail / error', \\\n"
               "  keyentry with boxes lc rgb '#%06x' title 'regressed', \\\n"
               "  0 with lines lw 2 lc rgb '#000000' title 'threshold'",
            COLOR_PASS, COLOR_FAIL, COLOR_REGRESSED);
    if (missing > 0)
        fprintf(f, ", \\\n  data using 1:5 with points pt 2 ps 1.5 lw 2 lc rgb '#%06x' "
                   "title 'no SNR number (skipped, error, exact)'", COLOR_OTHER);
    fputc('\n', f);
    return run_job(p, &j, err, err_len);
}

enum gg_status gg_report_plot_groups(struct gg_plotter *p, const struct gg_rcase *c,
                                     const char *png, char *err, size_t err_len)
{
    size_t n = c->n_groups;
    int width = (int)fmin(2400, fmax(900, 120 + 6.0 * (double)n));
    struct job j;
    enum gg_status st = job_open(p, png, width, 420, &j, err, err_len);
    if (st != GG_OK)
        return st;
    struct span sp = {0, 0};
    size_t empty = 0;
    for (size_t i = 0; i < n; i++) {
        const struct gg_rgroup *g = &c->groups[i];
        fprintf(j.data, "%lld\t", (long long)g->g);
        data_num(j.data, g->snr_db.v, g->snr_db.set);
        fprintf(j.data, "\t%d\n", gg_report_group_bad(c, g) ? COLOR_FAIL : COLOR_GROUP);
        if (g->snr_db.set)
            span_add(&sp, g->snr_db.v);
        empty += g->rows == 0;
    }
    /* Second data block: the empty groups, marked on the axis. */
    fputs("\n\n", j.data);
    for (size_t i = 0; i < n; i++)
        if (c->groups[i].rows == 0)
            fprintf(j.data, "%lld\n", (long long)c->groups[i].g);
    if (c->threshold_db.set)
        span_add(&sp, c->threshold_db.v);
    if (c->pooled_snr_db.set)
        span_add(&sp, c->pooled_snr_db.v);

    FILE *f = j.script;
    char title[512];
    snprintf(title, sizeof title, "%s%s%s", c->kernel, c->shape[0] ? ", " : "", c->shape);
    fputs("set title ", f);
    gq(f, c->label);
    fputs(".': SNR per group'.\"\\n\".", f);
    gq(f, title);
    fputs("\nset xlabel 'group (expert)'\nset ylabel 'SNR (dB)'\n", f);
    fprintf(f, "set xrange [-0.6:%.1f]\n", (double)(n ? c->groups[n - 1].g : 0) + 0.6);
    /* Bars rise from the bottom of the graph, not from 0 dB, so that a group at 0 dB or below
       (garbage output) is a visible red bar. */
    fprintf(f, "ymin = %.6g\n", span_set(f, sp, 1));
    if (n <= 20)
        fputs("set xtics 1\n", f);
    fputs("set key outside right top vertical\n", f);
    fprintf(f, "plot data index 0 using 1:2:($1-0.4):($1+0.4):(ymin):2:3 with boxxyerror "
               "lc rgb variable notitle, \\\n"
               "  keyentry with boxes lc rgb '#%06x' title 'group', \\\n"
               "  keyentry with boxes lc rgb '#%06x' title 'group below threshold'",
            COLOR_GROUP, COLOR_FAIL);
    if (c->threshold_db.set)
        fprintf(f, ", \\\n  %.6g with lines dt 2 lw 2 lc rgb '#%06x' title 'threshold %.1f dB'",
                c->threshold_db.v, COLOR_FAIL, c->threshold_db.v);
    if (c->pooled_snr_db.set)
        fprintf(f, ", \\\n  %.6g with lines dt 3 lw 1.5 lc rgb '#555555' title 'pooled %.1f dB'",
                c->pooled_snr_db.v, c->pooled_snr_db.v);
    if (empty > 0)
        fputs(", \\\n  data index 1 using 1:(ymin) with points pt 2 ps 1 lc rgb '#777777' "
              "title 'empty group'", f);
    fputc('\n', f);
    return run_job(p, &j, err, err_len);
}

/* Cases per second between two plot_data rows (the file's own rate is the run's average); NaN
   when they are too close in time to tell. */
static double rate_since(const double *prev, const double *t)
{
    double dt = t[GG_PLOT_RELATIVE_TIME] - prev[GG_PLOT_RELATIVE_TIME];
    return dt > 0.05 ? (t[GG_PLOT_EXECS_DONE] - prev[GG_PLOT_EXECS_DONE]) / dt : NAN;
}

/* The top of a y range from 0 that leaves a third above most for a key. */
static double headroom(double most)
{
    return isfinite(most) && most > 0 ? 1.35 * most : 1;
}

/* Whether column col of c's plot_data holds a number anywhere (an older ggfuzz's plot_data lacks
   some columns: the reader gives NaN for them). */
static int has_column(const struct gg_rcampaign *c, enum gg_plot_col col)
{
    for (size_t i = 0; i < c->n_ticks; i++)
        if (isfinite(c->ticks[i].v[col]))
            return 1;
    return 0;
}

static double column_max(const struct gg_rcampaign *c, enum gg_plot_col col)
{
    double m = 0;
    for (size_t i = 0; i < c->n_ticks; i++)
        if (isfinite(c->ticks[i].v[col]))
            m = fmax(m, c->ticks[i].v[col]);
    return m;
}

/* A panel with nothing to draw: its title and why, on an empty frame. */
static void empty_panel(FILE *f, const char *why)
{
    fputs("set yrange [0:1]\nunset ytics\nset label 1 ", f);
    gq(f, why);
    fputs(" at graph 0.5,0.5 center tc rgb '#777777'\nplot -1 notitle\nunset label 1\n"
          "set ytics nomirror\nset autoscale y\n", f);
}

/* Integer counts up to 8 get a tic each, so that one bug reads as 1, not 0.8. */
static void count_axis(FILE *f, const char *axis, double most)
{
    double top = fmax(most + 1, ceil(headroom(most)));
    fprintf(f, "set %srange [0:%g]\nset %stics %s nomirror\n", axis, top, axis,
            most <= 8 ? "1" : "autofreq");
}

enum gg_status gg_report_plot_campaign(struct gg_plotter *p, const struct gg_rcampaign *c,
                                       const char *png, char *err, size_t err_len)
{
    struct job j;
    enum gg_status st = job_open(p, png, 1000, 820, &j, err, err_len);
    if (st != GG_OK)
        return st;
    /* Time in seconds, minutes or hours, whichever keeps the axis readable. */
    double end = column_max(c, GG_PLOT_RELATIVE_TIME);
    double unit = end > 7200 ? 3600 : end > 300 ? 60 : 1;
    const char *unit_name = unit == 3600 ? "h" : unit == 60 ? "min" : "s";
    for (size_t i = 0; i < c->n_ticks; i++) {
        const double *t = c->ticks[i].v, *prev = i ? c->ticks[i - 1].v : NULL;
        double since = prev ? rate_since(prev, t) : NAN;
        const double v[] = {t[GG_PLOT_RELATIVE_TIME] / unit, t[GG_PLOT_EXECS_PER_SEC], since,
                            t[GG_PLOT_FEATURES_TOTAL], t[GG_PLOT_CORPUS_COUNT],
                            t[GG_PLOT_FAULTS_UNIQUE], t[GG_PLOT_BUCKETS], t[GG_PLOT_BUCKETS_NEW]};
        for (size_t k = 0; k < sizeof v / sizeof *v; k++) {
            if (k)
                fputc('\t', j.data);
            data_num(j.data, v[k], 1);
        }
        fputc('\n', j.data);
    }
    const char *kernel = gg_report_stat(c, "kernel"), *mutant = gg_report_stat(c, "mutant");
    char title[512];
    snprintf(title, sizeof title, "campaign %s: %s%s%s", c->dir, kernel ? kernel : "",
             mutant && strcmp(mutant, "none") != 0 ? " + mutant " : "",
             mutant && strcmp(mutant, "none") != 0 ? mutant : "");
    const char *with = c->n_ticks > 2 ? "lines" : "linespoints pt 7 ps 0.8";
    const char *steps = c->n_ticks > 2 ? "steps" : "linespoints pt 7 ps 0.8";
    FILE *f = j.script;
    fputs("set multiplot layout 3,1 title ", f);
    gq(f, title);
    /* Fixed side margins, so that the panels share one time axis. */
    fprintf(f, "\nset lmargin 10\nset rmargin 12\nset xrange [0:%g]\nset key left top\n",
            end > 0 ? end / unit : 1);

    fputs("set title 'bugs (buckets) and signatures'\n", f);
    if (has_column(c, GG_PLOT_BUCKETS)) {
        count_axis(f, "y", column_max(c, GG_PLOT_BUCKETS));
        fputs("set ylabel 'bugs'\nset y2label 'signatures'\nset y2range [0:*]\nset y2tics\n", f);
        fprintf(f, "plot data using 1:7 with %s lw 3 lc rgb '#%06x' title 'bugs', \\\n"
                   "  data using 1:8 with %s lw 1.5 dt 2 lc rgb '#ef6c00' title 'new bugs', \\\n"
                   "  data using 1:6 axes x1y2 with %s lw 1 lc rgb '#777777' "
                   "title 'signatures (right axis)'\n", steps, COLOR_FAIL, steps, steps);
        fputs("unset y2tics\nunset y2label\n", f);
    } else if (has_column(c, GG_PLOT_FAULTS_UNIQUE)) {
        count_axis(f, "y", column_max(c, GG_PLOT_FAULTS_UNIQUE));
        fprintf(f, "set ylabel 'signatures'\nplot data using 1:6 with %s lw 2 lc rgb '#777777' "
                   "title 'signatures (no bucket columns in this plot_data)'\n", steps);
    } else {
        empty_panel(f, "no bug or signature columns in this plot_data");
    }

    /* Room above the highest value for the key, which sits top left. */
    fprintf(f, "set title 'coverage'\nset ylabel 'features'\nset yrange [0:%g]\n"
               "set ytics autofreq\n", headroom(fmax(column_max(c, GG_PLOT_FEATURES_TOTAL),
                                                      column_max(c, GG_PLOT_CORPUS_COUNT))));
    if (has_column(c, GG_PLOT_FEATURES_TOTAL) || has_column(c, GG_PLOT_CORPUS_COUNT)) {
        fputs("plot ", f);
        if (has_column(c, GG_PLOT_FEATURES_TOTAL))
            fprintf(f, "data using 1:4 with %s lw 2 lc rgb '#%06x' title 'features'%s", steps,
                    COLOR_PASS, has_column(c, GG_PLOT_CORPUS_COUNT) ? ", \\\n  " : "");
        if (has_column(c, GG_PLOT_CORPUS_COUNT))
            fprintf(f, "data using 1:5 with %s dt 2 lc rgb '#555555' title 'corpus cases'",
                    steps);
        fputc('\n', f);
    } else {
        empty_panel(f, "no coverage columns in this plot_data");
    }

    double fastest = column_max(c, GG_PLOT_EXECS_PER_SEC);
    for (size_t i = 1; i < c->n_ticks; i++) {
        double r = rate_since(c->ticks[i - 1].v, c->ticks[i].v);
        fastest = isfinite(r) ? fmax(fastest, r) : fastest;
    }
    fprintf(f, "set title 'cases per second'\nset ylabel 'cases / s'\nset xlabel 'time (%s)'\n"
               "set yrange [0:%g]\n", unit_name, headroom(fastest));
    fprintf(f, "plot data using 1:3 with %s lw 1.5 lc rgb '#%06x' title 'since the sample "
               "before', \\\n  data using 1:2 with %s dt 2 lc rgb '#555555' title 'average'\n"
               "unset multiplot\n", with, COLOR_GROUP, with);
    return run_job(p, &j, err, err_len);
}

enum gg_status gg_report_plot_gpus(struct gg_plotter *p, const struct gg_rcampaign *c,
                                   const char *png, char *err, size_t err_len)
{
    int ids[64];
    size_t n = gg_report_gpus(c, ids, 64);
    struct job j;
    enum gg_status st = job_open(p, png, (int)fmin(1600, 500 + 60.0 * (double)n), 320, &j, err,
                                 err_len);
    if (st != GG_OK)
        return st;
    struct span sp = {0, 0};
    for (size_t i = 0; i < n; i++) {
        const char *rate = gg_report_gpu_stat(c, ids[i], "execs_per_sec");
        const char *retired = gg_report_gpu_stat(c, ids[i], "retired");
        int given_up = retired && strcmp(retired, "0") != 0;
        double v = rate ? strtod(rate, NULL) : NAN;
        fprintf(j.data, "%zu\tGPU %d%s\t", i, ids[i], given_up ? " (given up)" : "");
        data_num(j.data, v, rate != NULL);
        fprintf(j.data, "\t%d\n", given_up ? COLOR_OTHER : COLOR_GROUP);
        span_add(&sp, rate ? v : NAN);
    }
    FILE *f = j.script;
    fputs("set title 'cases per second per GPU, over the whole run'\nset ylabel 'cases / s'\n",
          f);
    fprintf(f, "set xrange [-0.6:%.1f]\n", (double)n - 0.4);
    span_set(f, sp, 0);
    fputs("set boxwidth 0.6 absolute\nset xtics scale 0\nunset key\n"
          "plot data using 1:3:4:xtic(2) with boxes lc rgb variable notitle, \\\n"
          "  data using 1:3:(sprintf('%.1f', $3)) with labels offset 0,0.7 notitle\n", f);
    return run_job(p, &j, err, err_len);
}

enum gg_status gg_report_plot_nights(struct gg_plotter *p, const struct gg_rnights *t,
                                     const char *png, char *err, size_t err_len)
{
    size_t n = t->count, stride = n > LABELS_MAX ? (n + LABELS_MAX - 1) / LABELS_MAX : 1;
    int width = (int)fmin(2400, fmax(900, 140 + 28.0 * (double)n));
    struct job j;
    enum gg_status st = job_open(p, png, width, 680, &j, err, err_len);
    if (st != GG_OK)
        return st;
    double most = 0, most_cases = 0, most_sigs = 0;
    for (size_t k = 0; k < n; k++) {
        const struct gg_rnight *night = &t->n[k];
        fprintf(j.data, "%zu\t", k);
        if (k % stride == 0)
            data_text(j.data, night->label, LABEL_MAX);
        fputc('\t', j.data);
        const long long v[] = {night->buckets, night->buckets_new, night->cases,
                               night->signatures};
        for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
            if (i)
                fputc('\t', j.data);
            data_num(j.data, (double)v[i], v[i] >= 0 && night->error == NULL);
        }
        fputc('\n', j.data);
        if (night->error == NULL) {
            most = fmax(most, (double)night->buckets);
            most_cases = fmax(most_cases, (double)night->cases);
            most_sigs = fmax(most_sigs, (double)night->signatures);
        }
    }
    FILE *f = j.script;
    fputs("set multiplot layout 2,1\nset lmargin 10\nset rmargin 12\n", f);
    fprintf(f, "set xrange [-0.6:%.1f]\nset boxwidth 0.7 absolute\nset key left top\n"
               "set xtics rotate by 30 right font ',8' scale 0\n", (double)n - 0.4);
    fputs("set title 'bugs per night: new that night, and seen on an earlier night'\n"
          "set ylabel 'bugs'\n", f);
    count_axis(f, "y", most);
    fprintf(f, "plot data using 1:3:xtic(2) with boxes lc rgb '#%06x' title 'seen before', \\\n"
               "  data using 1:4 with boxes lc rgb '#%06x' title 'new'\n",
            0xef9a9a, COLOR_FAIL);
    fprintf(f, "set title 'cases per night'\nset ylabel 'cases'\nset yrange [0:%g]\n"
               "set ytics autofreq nomirror\nset y2label 'signatures'\nset y2range [0:%g]\n"
               "set y2tics\n"
               "plot data using 1:5:xtic(2) with boxes lc rgb '#%06x' title 'cases', \\\n"
               "  data using 1:6 axes x1y2 with linespoints pt 7 ps 0.8 lc rgb '#777777' "
               "title 'signatures (right axis)'\nunset multiplot\n", headroom(most_cases),
            headroom(most_sigs), COLOR_GROUP);
    return run_job(p, &j, err, err_len);
}
