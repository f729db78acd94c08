// The reference backend with every float32 element each step writes moved by 2^-20 of itself
// once the step has run: up ("reference-jittered-up") or down ("reference-jittered-down").
// The differential oracle (differential.h) reruns a disagreeing plan on both, with its
// inputs moved too, to see what float32 itself leaves undetermined. Moving the inputs alone
// does not show a result that only rounding decides: the variance of constant data,
// E[X - mean(X)], is exactly 0 for any X, and each backend's is the rounding of its mean,
// of either sign; moving the mean up and then down moves that result to both signs.
#pragma once

namespace ferrite::fuzz {

// The name of the jittered reference moving up or down (registered on the first call).
const char* jittered_reference(bool up);

}  // namespace ferrite::fuzz
