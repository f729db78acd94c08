// Types of ferrite-web (ferrite.mjs and ferrite_rt.mjs), after onnxruntime-web's.

export type TensorType =
  | 'float32' | 'float64' | 'float16' | 'int8' | 'int16' | 'int32' | 'int64'
  | 'uint8' | 'uint16' | 'uint32' | 'uint64' | 'bool' | 'string';

export type TensorData =
  | Float32Array | Float64Array | Int8Array | Int16Array | Int32Array | BigInt64Array
  | Uint8Array | Uint16Array | Uint32Array | BigUint64Array | string[];

export class Tensor {
  constructor(type: TensorType,
              data: TensorData | readonly number[] | readonly bigint[] | readonly string[],
              dims?: readonly number[]);
  constructor(data: readonly string[], dims?: readonly number[]);
  constructor(data: Float32Array | Float64Array | Int32Array | BigInt64Array | Uint8Array,
              dims?: readonly number[]);
  readonly type: TensorType;
  readonly data: TensorData;
  readonly dims: readonly number[];
  readonly size: number;
}

export interface ValueInfo {
  readonly name: string;
  readonly type: TensorType | string;
  /** null for a symbolic or unknown dimension */
  readonly dims: readonly (number | null)[];
  /** the model's name for each symbolic dimension ('batch'), null for the others */
  readonly dimNames: readonly (string | null)[];
}

/** onnxruntime-web's InferenceSession.ValueMetadata: a symbolic dim is its name, an
 *  unknown one -1. */
export interface ValueMetadata {
  readonly name: string;
  readonly isTensor: true;
  readonly type: TensorType | string;
  readonly shape: readonly (number | string)[];
}

export interface SessionOptions {
  /** 'portable' (default) or 'reference' */
  backend?: string;
  /** kernel threads: > 1 runs on the threaded module (web workers) when the page is
   *  cross-origin isolated (or under node); otherwise single-threaded */
  threads?: number;
  /** time every step of every run (see InferenceSession.report) */
  profile?: boolean;
}

/** The run's types under onnxruntime-web's names (InferenceSession.FetchesType, ...). */
export declare namespace InferenceSession {
  /** onnxruntime-web's RunOptions: accepted and checked; `terminate: true` fails the run;
   *  any other key throws. */
  interface RunOptions {
    logSeverityLevel?: 0 | 1 | 2 | 3 | 4;
    logVerbosityLevel?: number;
    terminate?: boolean;
    tag?: string;
    extra?: Record<string, unknown>;
  }
  type FeedsType = { readonly [name: string]: Tensor };
  /** Output names, or an object whose keys are output names and whose values are null (the
   *  run allocates the output) or a Tensor of the output's type and dims (pre-allocated: the
   *  output is written into it, and it is what the result holds). Unknown names throw. */
  type FetchesType = readonly string[] | { readonly [name: string]: Tensor | null };
  type ReturnType = { readonly [name: string]: Tensor };
}
export type RunOptions = InferenceSession.RunOptions;

export class FerriteError extends Error {
  /** 'INVALID_ARGUMENT' | 'MODEL_ERROR' | 'UNSUPPORTED' | 'RUN_ERROR' | 'OUT_OF_MEMORY' | ... */
  readonly status: string;
}

export class InferenceSession {
  /** An ONNX model or a compiled plan: bytes, a path (node) or a URL (fetched). */
  static create(model: Uint8Array | ArrayBuffer | ArrayBufferView | string | URL,
                options?: SessionOptions): Promise<InferenceSession>;
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  readonly inputs: readonly ValueInfo[];
  readonly outputs: readonly ValueInfo[];
  readonly inputMetadata: readonly ValueMetadata[];
  readonly outputMetadata: readonly ValueMetadata[];
  /** whether it runs on the threaded module */
  readonly threaded: boolean;
  /** onnxruntime-web's overloads: every output, or those that `fetches` names. An object
   *  in second place is fetches when one of its keys is an output name whose value is null
   *  or a Tensor, and RunOptions otherwise. */
  run(feeds: InferenceSession.FeedsType, options?: RunOptions):
      Promise<InferenceSession.ReturnType>;
  run(feeds: InferenceSession.FeedsType, fetches: InferenceSession.FetchesType,
      options?: RunOptions): Promise<InferenceSession.ReturnType>;
  /** The plan of the last run; its steps are timed when created with {profile: true}. */
  report(): {
    kernels: number; externs: number; buffers: number; pool_bytes: number;
    constant_bytes: number; steps: { label: string; runs: number; ms: number }[];
  };
  release(): Promise<void>;
}
