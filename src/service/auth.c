/* Bearer keys. Both keys are compared in full on every request, over zero-padded buffers of
 * the maximum key size, so the time taken does not depend on where a guess first differs nor
 * on which key (if any) it matches. */
#include <string.h>
#include <strings.h>

#include "service/service.h"

void eo__auth_init(eo__auth *a, const eo_service_keys *keys)
{
    memset(a, 0, sizeof *a);
    a->server_len = strnlen(keys->server, EO_SERVICE_KEY_MAX);
    a->admin_len = strnlen(keys->admin, EO_SERVICE_KEY_MAX);
    memcpy(a->server, keys->server, a->server_len);
    memcpy(a->admin, keys->admin, a->admin_len);
}

void eo__auth_clear(eo__auth *a)
{
    volatile unsigned char *p = (volatile unsigned char *)a;
    for (size_t i = 0; i < sizeof *a; i++)
        p[i] = 0;
}

/* 0 when equal; never exits early. */
static unsigned ct_diff(const unsigned char *x, size_t xlen, const unsigned char *y, size_t ylen)
{
    volatile unsigned acc = (unsigned)(xlen ^ ylen);
    for (size_t i = 0; i < EO_SERVICE_KEY_MAX + 1; i++)
        acc |= (unsigned)(x[i] ^ y[i]);
    return acc;
}

/* The bearer value of an Authorization header: its start, and its length in *n (0: none). */
static const char *bearer(const char *header, size_t *n)
{
    *n = 0;
    if (!header)
        return NULL;
    while (*header == ' ' || *header == '\t')
        header++;
    if (strncasecmp(header, "Bearer ", 7) != 0)
        return NULL;
    header += 7;
    while (*header == ' ')
        header++;
    size_t len = strlen(header);
    while (len > 0 && (header[len - 1] == ' ' || header[len - 1] == '\t'))
        len--;
    *n = len;
    return header;
}

eo__role eo__auth_check(const eo__auth *a, const char *header, bool *missing)
{
    unsigned char tok[EO_SERVICE_KEY_MAX + 1];
    size_t n;
    header = bearer(header, &n);
    *missing = n == 0;
    if (n == 0)
        return EO__ROLE_NONE;
    /* Longer than any key cannot match; the length alone reveals nothing of the keys. */
    if (n > EO_SERVICE_KEY_MAX)
        return EO__ROLE_NONE;
    memset(tok, 0, sizeof tok);
    memcpy(tok, header, n);
    unsigned d_admin = ct_diff(tok, n, a->admin, a->admin_len);
    unsigned d_server = ct_diff(tok, n, a->server, a->server_len);
    memset(tok, 0, sizeof tok);
    if (d_admin == 0)
        return EO__ROLE_ADMIN;
    if (d_server == 0)
        return EO__ROLE_SERVER;
    return EO__ROLE_NONE;
}

int eo__auth_bearer(const char *header, char *out, size_t cap)
{
    size_t n;
    const char *v = bearer(header, &n);
    if (n == 0 || n >= cap)
        return -1;
    memcpy(out, v, n);
    out[n] = '\0';
    return 0;
}

bool eo__auth_token_shaped(const char *header)
{
    size_t n;
    const char *v = bearer(header, &n);
    if (n != EO__TOKEN_LEN)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'f')))
            return false;
    return true;
}

bool eo__ct_equal(const char *a, const char *b, size_t n)
{
    volatile unsigned acc = 0;
    for (size_t i = 0; i < n; i++)
        acc |= (unsigned)((unsigned char)a[i] ^ (unsigned char)b[i]);
    return acc == 0;
}
