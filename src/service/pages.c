/* The dashboard's pages and their files (docs/SERVICE.md "Dashboard and reads"): web/ is built
 * into the program, so that `evenodds serve` serves it wherever it runs, with nothing fetched
 * from elsewhere. Every page path answers the one page, whose script reads the path and asks
 * the read APIs. The files carry their content type, an ETag (304 when the browser has it) and
 * the pages' security headers (http.c). */
#include <stdlib.h>
#include <string.h>

#include "service/service.h"

static const eo__web_file *web_file(const char *name)
{
    for (size_t i = 0; i < eo__web_file_count; i++)
        if (strcmp(eo__web_files[i].name, name) == 0)
            return &eo__web_files[i];
    return NULL;
}

/* Answers @p f, or 304 when the browser's copy is current. Browsers ask again each time
 * (no-cache): a new program serves new files at once, and an unchanged file costs a 304. */
static eo__run serve_file(eo__call *c, eo__answer *a, const eo__web_file *f)
{
    a->page = true;
    a->cache = "no-cache";
    a->etag = f->etag;
    a->ctype = f->ctype;
    const char *known = eo__call_header(c, "If-None-Match");
    if (known != NULL && strcmp(known, f->etag) == 0) {
        a->status = 304;
        return EO__RUN_DONE;
    }
    a->body = malloc(f->len);
    if (a->body == NULL) {
        eo__answer_error(a, 500, "internal", "out of memory", NULL);
        return EO__RUN_DONE;
    }
    memcpy(a->body, f->data, f->len);
    a->len = f->len;
    a->status = 200;
    return EO__RUN_DONE;
}

static bool no_dashboard(eo__call *c, eo__answer *a)
{
    if (c->svc->cfg.dashboard != EO_DASHBOARD_OFF)
        return false;
    eo__answer_error(a, 404, "not_found", "the dashboard is off (serve --dashboard)", NULL);
    return true;
}

eo__run eo__h_page(eo__call *c, eo__answer *a)
{
    const eo__web_file *f = web_file("index.html");
    if (no_dashboard(c, a))
        return EO__RUN_DONE;
    if (f == NULL) {
        eo__answer_error(a, 500, "internal", "the dashboard was built without its page", NULL);
        return EO__RUN_DONE;
    }
    return serve_file(c, a, f);
}

eo__run eo__h_static(eo__call *c, eo__answer *a)
{
    const eo__web_file *f = web_file(eo__path_param(c->m, "file"));
    if (no_dashboard(c, a))
        return EO__RUN_DONE;
    if (f == NULL) {
        eo__answer_error(a, 404, "not_found", "no such file", "file");
        return EO__RUN_DONE;
    }
    return serve_file(c, a, f);
}
