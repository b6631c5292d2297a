/* Internal helpers of the round record shared with the codec (not part of the public API). */
#ifndef EO_ROUND_INTERNAL_H
#define EO_ROUND_INTERNAL_H

/*
 * Makes the NUL-terminated message s valid UTF-8 in place: an incomplete sequence at the end
 * (left by snprintf truncation) is cut, any other invalid byte becomes '?'. Error messages end
 * up in JSON bodies, and jansson refuses to build a string that is not valid UTF-8.
 */
void eo__utf8_fix(char *s);

#endif
