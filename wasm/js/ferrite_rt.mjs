// Ferrite for JavaScript, runtime-only build: loads compiled plans (`ferrite compile MODEL
// -o MODEL.fplan`) only, with no ONNX frontend and no compiler in its wasm. Same API as
// ferrite.mjs.
import { defineInferenceSession, FerriteError, Tensor } from './ferrite_api.mjs';

export const InferenceSession = defineInferenceSession(() => import('./ferrite_rt_wasm.mjs'),
                                                       new URL('./ferrite_rt_wasm.wasm', import.meta.url));
export { FerriteError, Tensor };
