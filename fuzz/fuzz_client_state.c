/*
 * The client's state file parser (src/client/state.c) on arbitrary bytes: a file read back
 * from disk is untrusted. Beyond not crashing or leaking, a file that parses must format to a
 * text that parses to the same state (the worker rewrites it after every change), and must
 * respect the ring's size.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The first byte picks the ring size, as queue_slots would. */
    size_t cap = size > 0 ? 1 + data[0] % 16 : 8;
    eo__client_state st;
    char err[256];
    if (eo__client_state_parse((const char *)data, size, cap, &st, err, sizeof err) != 0)
        return 0;
    if (st.count > cap)
        abort();
    char *text = NULL;
    size_t len = 0;
    if (eo__client_state_format(&st, &text, &len) != 0)
        abort();
    eo__client_state back;
    if (eo__client_state_parse(text, len, cap, &back, err, sizeof err) != 0)
        abort();
    if (back.count != st.count || back.next_seq != st.next_seq || back.epoch != st.epoch ||
        back.dropped != st.dropped)
        abort();
    for (size_t i = 0; i < st.count; i++)
        if (strcmp(eo__client_state_at(&st, i)->id, eo__client_state_at(&back, i)->id) != 0 ||
            strcmp(eo__client_state_at(&st, i)->text, eo__client_state_at(&back, i)->text) != 0)
            abort();
    free(text);
    eo__client_state_free(&back);
    eo__client_state_free(&st);
    return 0;
}
