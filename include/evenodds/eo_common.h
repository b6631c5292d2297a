/**
 * @file eo_common.h
 * Error codes, limits and small shared types of libevenodds.
 *
 * Every function of the library returns 0 on success or a negative EO_E* code, and writes its
 * results through out-parameters. Library code never prints, exits or reads the clock.
 */
#ifndef EO_COMMON_H
#define EO_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Error codes (all negative; 0 is success). */
enum {
    EO_OK = 0,
    EO_EINVAL = -1,    /**< an argument or input value is invalid */
    EO_ENOMEM = -2,    /**< allocation failed */
    EO_ERANGE = -3,    /**< a value is outside its allowed range */
    EO_ENOTFOUND = -4, /**< the named object does not exist */
    EO_EEXIST = -5,    /**< the object exists already (with the same content) */
    EO_ECONFLICT = -6, /**< the object exists with different content */
    EO_EIO = -7,       /**< an I/O or storage error */
    EO_ELIMIT = -8,    /**< a size limit was exceeded */
    EO_EPARSE = -9,    /**< malformed input (syntax) */
    EO_EBUSY = -10,    /**< the resource is busy or shutting down */
    EO_EINTERNAL = -11 /**< a broken invariant: a bug */
};

/** Longest player, round, pool or server id in bytes (excluding the terminating NUL). */
#define EO_ID_MAX 128

/** Largest number of players in one round or split request. */
#define EO_PLAYERS_MAX 256

/**
 * Text for an error code. Never NULL; the string is static.
 */
const char *eo_strerror(int err);

/**
 * Checks that @p id is a valid identifier: 1..EO_ID_MAX bytes, valid UTF-8, no control
 * characters (U+0000..U+001F, U+007F). @p len is its length in bytes.
 * Returns 0, EO_EINVAL (empty or control character or bad UTF-8) or EO_ELIMIT (too long).
 */
int eo_id_check(const char *id, size_t len);

/** The rule of eo_pool_name_check(), as its message states it. */
#define EO_POOL_NAME_RULE                                                                      \
    "a pool name is 1 to 128 bytes of letters, digits, '_', '-' or '.', and not \".\" or \"..\""

/**
 * Checks the name of a pool being created: 1..EO_ID_MAX bytes of A-Z a-z 0-9 '_' '-' '.',
 * other than "." and ".." (the name appears in URLs, where clients resolve dot segments, in
 * file names and in logs; docs/ROUNDS.md "Other request bodies of the service"). Only creation
 * checks it: a pool created before the rule keeps its name, which is any id (eo_id_check()).
 * @p name may be NULL (refused). Returns 0, EO_EINVAL (empty, another byte, "." or "..") or
 * EO_ELIMIT (too long); on failure *message (when @p message is not NULL) is EO_POOL_NAME_RULE,
 * a static string.
 */
int eo_pool_name_check(const char *name, size_t len, const char **message);

#ifdef __cplusplus
}
#endif
#endif
