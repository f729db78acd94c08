// Types of ferrite-web (ferrite.mjs and ferrite_rt.mjs), after onnxruntime-web's.

export type TensorType =
  | 'float32' | 'float64' | 'float16' | 'int8' | 'int16' | 'int32' | 'int64'
  | 'uint8' | 'uint16' | 'uint32' | 'uint64' | 'bool';

export type TensorData =
  | Float32Array | Float64Array | Int8Array | Int16Array | Int32Array | BigInt64Array
  | Uint8Array | Uint16Array | Uint32Array | BigUint64Array;

export class Tensor {
  constructor(type: TensorType, data: TensorData | readonly number[] | readonly bigint[],
              dims?: readonly number[]);
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
  /** whether it runs on the threaded module */
  readonly threaded: boolean;
  run(feeds: Record<string, Tensor>, fetches?: readonly string[]):
      Promise<Record<string, Tensor>>;
  /** The plan of the last run; its steps are timed when created with {profile: true}. */
  report(): {
    kernels: number; externs: number; buffers: number; pool_bytes: number;
    constant_bytes: number; steps: { label: string; runs: number; ms: number }[];
  };
  release(): Promise<void>;
}
