/**
 * @file eo_codec.h
 * JSON mapping of the canonical round record, of JSONL round logs and of split requests and
 * answers (jansson). This is a parser of untrusted input: every entry point is fuzzed
 * (fuzz/) and rejects malformed input with an error that names the field (and the line, for
 * JSONL), changing nothing.
 *
 * Ownership: functions that return json_t* or char* give the caller a new reference / a
 * malloc'd string; eo_round values are owned by the caller and released with eo_round_free().
 */
#ifndef EO_CODEC_H
#define EO_CODEC_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "eo_common.h"
#include "eo_round.h"
#include "eo_split.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Flags every parse of untrusted JSON uses (duplicate keys are an error). */
#define EO_JSON_DECODE_FLAGS JSON_REJECT_DUPLICATES

/**
 * Maps a parsed JSON object to @p out and validates it (eo_round_validate()). Unknown fields
 * are ignored here (they are kept by eo_round_canonical()). On failure returns EO_EINVAL,
 * fills @p err (field path and message) and leaves @p out zeroed.
 */
int eo_round_from_json(const json_t *obj, eo_round *out, eo_round_error *err);

/**
 * Parses one round from text (duplicate keys rejected, at most one JSON value) and maps it.
 * Syntax errors give EO_EPARSE with the column in err->message and err->field "" .
 */
int eo_round_from_text(const char *text, size_t len, eo_round *out, eo_round_error *err);

/**
 * The canonical text of a round record: compact JSON with keys sorted, unknown fields kept.
 * Two requests carry "the same content" when their canonical texts are equal. *out is malloc'd.
 * Returns 0 or EO_ENOMEM.
 */
int eo_round_canonical(const json_t *obj, char **out);

/** Reads a JSONL round log line by line. */
typedef struct eo_jsonl_reader eo_jsonl_reader;

/**
 * Starts reading @p f (not closed by the reader). @p name is used in messages (copied).
 * With @p skip_duplicates a round whose id was seen earlier in the file is skipped (and
 * counted); without it, it is an error. Blank lines are skipped.
 */
int eo_jsonl_open(FILE *f, const char *name, bool skip_duplicates, eo_jsonl_reader **out);

/**
 * Next round. Returns 1 with *round filled (and, if @p obj is not NULL, *obj a new reference to
 * the parsed object), 0 at end of file, or a negative code with @p msg (capacity @p msglen)
 * set to "NAME:LINE: \"FIELD\": MESSAGE".
 */
int eo_jsonl_next(eo_jsonl_reader *r, eo_round *round, json_t **obj, char *msg, size_t msglen);

/** Line number of the last line read (1-based). */
size_t eo_jsonl_line(const eo_jsonl_reader *r);

/** Rounds skipped as duplicates so far. */
size_t eo_jsonl_skipped(const eo_jsonl_reader *r);

/** Closes the reader. NULL is a no-op. */
void eo_jsonl_close(eo_jsonl_reader *r);

/** A decoded split request: {"players":[id | {"id":…, "rating":…}, …], "bench":"solver"|"queue"}. */
typedef struct eo_split_request {
    size_t n;              /**< number of players */
    char **ids;            /**< n ids, owned */
    int64_t *rating;       /**< n ratings, owned; meaningful where has_rating[i] */
    bool *has_rating;      /**< n flags, owned */
    eo_bench_mode bench;
} eo_split_request;

/**
 * Decodes a split request. Players are id strings or objects with "id" and an integer "rating";
 * ids must be distinct; 2 <= n <= EO_SPLIT_EXACT_MAX. On failure returns EO_EINVAL with @p err.
 */
int eo_split_request_from_json(const json_t *obj, eo_split_request *out, eo_round_error *err);

/** Releases what a split request owns and zeroes it. NULL is a no-op. */
void eo_split_request_free(eo_split_request *req);

/**
 * Encodes splits as {"splits":[{"k":…,"A":[ids],"B":[ids],"bench":[ids],"gap":…,"p_a":…},…]}.
 * @p ids maps request indices to ids. Returns a new reference or NULL (out of memory).
 */
json_t *eo_splits_to_json(const eo_splits *s, const char *const *ids);

#ifdef __cplusplus
}
#endif
#endif
