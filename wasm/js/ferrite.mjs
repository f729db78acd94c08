// Ferrite for JavaScript (node and browsers): the full build, which loads ONNX models and
// compiled plans. See ferrite.d.ts and README.md.
//
//   import { InferenceSession, Tensor } from 'ferrite-web';
//   const session = await InferenceSession.create('model.onnx');
//   const { y } = await session.run({ x: new Tensor('float32', data, [1, 64]) });
import { defineInferenceSession, FerriteError, Tensor } from './ferrite_api.mjs';

export const InferenceSession = defineInferenceSession(
    () => import('./ferrite_wasm.mjs'), new URL('./ferrite_wasm.wasm', import.meta.url),
    { importModule: () => import('./ferrite_mt_wasm.mjs'),
      wasmUrl: new URL('./ferrite_mt_wasm.wasm', import.meta.url) });
export { FerriteError, Tensor };
