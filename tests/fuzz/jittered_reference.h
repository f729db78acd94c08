// The reference backend with the float32 results of chosen steps moved by 2^-20 of their
// magnitude or of the largest the step read, whichever is larger, each element up or down
// by a fixed pattern, once each step has run ("reference-jittered"). The differential oracle
// (differential.h) reruns a disagreeing plan on it, to see what float32 itself leaves
// undetermined: moving the inputs alone does not show a result that only rounding decides
// (the variance of constant data, E[X^2] - E[X]^2, is exactly 0; each backend's is the
// rounding of its two terms, of either sign), moving one of the terms does, and moving both
// at once by the same factor would not. So each rerun moves one group of steps, and each
// element of a step by the pattern (E[X - mean] of data whose mean is exactly 0 moves with
// the elements of X - mean, not with the mean).
#pragma once

namespace ferrite::fuzz {

// The steps the next sessions on jittered_reference() move: those whose ordinal (kernels,
// then externs, in the order a Session prepares them) modulo `groups` is `group`, by the
// pattern (`up`) or by its reverse. groups == 0: none.
void set_jitter(int group, int groups, bool up);

// The backend's name (registered on the first call).
const char* jittered_reference();

}  // namespace ferrite::fuzz
