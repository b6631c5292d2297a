/* Error texts and identifier checks shared by every module. */
#include "evenodds/eo_common.h"

const char *eo_strerror(int err)
{
    switch (err) {
    case EO_OK: return "success";
    case EO_EINVAL: return "invalid argument";
    case EO_ENOMEM: return "out of memory";
    case EO_ERANGE: return "value out of range";
    case EO_ENOTFOUND: return "not found";
    case EO_EEXIST: return "already exists";
    case EO_ECONFLICT: return "conflicts with existing content";
    case EO_EIO: return "storage or I/O error";
    case EO_ELIMIT: return "size limit exceeded";
    case EO_EPARSE: return "malformed input";
    case EO_EBUSY: return "busy or shutting down";
    case EO_EINTERNAL: return "internal error";
    default: return "unknown error";
    }
}

/* Length of the UTF-8 sequence starting at s (at most n bytes), or 0 when it is not valid
 * (overlong forms, surrogates and values above U+10FFFF are invalid). */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    unsigned cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2; min = 0x80; cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3; min = 0x800; cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4; min = 0x10000; cp = c & 0x07;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

int eo_id_check(const char *id, size_t len)
{
    if (id == NULL || len == 0)
        return EO_EINVAL;
    if (len > EO_ID_MAX)
        return EO_ELIMIT;
    const unsigned char *s = (const unsigned char *)id;
    for (size_t i = 0; i < len;) {
        if (s[i] < 0x20 || s[i] == 0x7F)
            return EO_EINVAL;
        size_t l = utf8_seq(s + i, len - i);
        if (l == 0)
            return EO_EINVAL;
        /* C1 controls U+0080..U+009F are control characters too. */
        if (l == 2 && s[i] == 0xC2 && s[i + 1] < 0xA0)
            return EO_EINVAL;
        i += l;
    }
    return 0;
}

static int pool_name_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.';
}

int eo_pool_name_check(const char *name, size_t len, const char **message)
{
    int rc = 0;
    if (name == NULL || len == 0)
        rc = EO_EINVAL;
    else if (len > EO_ID_MAX)
        rc = EO_ELIMIT;
    else if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
        rc = EO_EINVAL;
    for (size_t i = 0; rc == 0 && i < len; i++)
        if (!pool_name_char((unsigned char)name[i]))
            rc = EO_EINVAL;
    if (rc != 0 && message != NULL)
        *message = EO_POOL_NAME_RULE;
    return rc;
}
